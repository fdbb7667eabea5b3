// Command replay is the move benchmark of make bench: dlqt replay against a
// RabbitMQ Shovel moving the same messages between the same two queues.
//
// It loads BENCH_N (default 100,000) parked messages of BENCH_SIZE (1,024)
// bytes into a queue of a vhost of its own, declares a second queue, and
// for BENCH_ROUNDS (3) rounds moves them across and back: one way with
// `dlqt replay QUEUE --where reason=published --to :OTHER --yes
// --canary 5 --canary-rate 5 --observe 1s --baseline 0s --rate 1000000`
// (under /usr/bin/time -v: wall time, peak RSS), the other way with a
// dynamic Shovel (ack-mode on-confirm, src-delete-after queue-length: the
// way an operator moves a queue by hand), timed from its declaration until
// the destination holds all N and the source none. Who goes first
// alternates, so each always moves N from a full queue to an empty one. It
// prints every round, the medians and the ratio, and checks at the end that
// the N ids loaded are all there, once each. Last, it times
// `dlqt discard QUEUE --where reason=published --yes` of all N (wall time,
// peak RSS), then the discard of one group interleaved with four others,
// every fifth message of BENCH_INTERLEAVED_N (20,000; 0 leaves it out),
// and the same discard by raw amqp091-go holding the queue on one channel
// per 2,048 deliveries, with the ratio, and the replay of that group.
// The vhost is deleted at the end. It needs the rabbitmq_shovel plugin (make bench enables it).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/bench/internal/fill"
	"github.com/dlqt/dlqt/bench/internal/measure"
	"github.com/dlqt/dlqt/internal/broker"
)

const (
	parked = "bench.dlq"
	work   = "bench.work"
)

func main() {
	n, size, rounds := measure.EnvInt("BENCH_N", 100000), measure.EnvInt("BENCH_SIZE", 1024), measure.EnvInt("BENCH_ROUNDS", 3)
	cfg := broker.Config{
		AMQPURL: measure.EnvStr("DLQT_TEST_AMQP_URL", broker.DefaultAMQPURL),
		MgmtURL: measure.EnvStr("DLQT_TEST_MGMT_URL", broker.DefaultMgmtURL),
		Timeout: time.Minute, // a vhost delete of 100,000 messages takes seconds
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	cfg.Vhost = "dlqt-bench-move-" + hex.EncodeToString(b[:])
	err := bench(cfg, n, size, rounds)
	if derr := broker.DeleteVhost(cfg); derr != nil && err == nil {
		err = derr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func bench(cfg broker.Config, n, size, rounds int) error {
	fmt.Printf("move benchmark: %d x %d B in vhost %s, %d rounds: dlqt replay against a Shovel (ack-mode on-confirm)\n", n, size, cfg.Vhost, rounds)
	start := time.Now()
	if err := fill.Load(cfg, parked, n, size); err != nil {
		return err
	}
	fmt.Printf("loaded in %s\n", time.Since(start).Round(time.Millisecond))
	q, err := openQueues(cfg)
	if err != nil {
		return err
	}
	defer q.conn.Close()
	if err := q.declare(work); err != nil {
		return err
	}
	journal, err := os.MkdirTemp("", "dlqt-bench-move-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(journal)
	config := filepath.Join(journal, "config.yaml")
	if err := os.WriteFile(config, []byte("replay:\n  allow: [\":bench.*\"]\n"), 0o600); err != nil {
		return err
	}

	var dl, sh []measure.Run
	from, to := parked, work
	fmt.Printf("%-6s %12s %12s %12s\n", "round", "dlqt s", "dlqt MiB", "shovel s")
	for i := range rounds {
		movers := []string{"dlqt", "shovel"}
		if i%2 == 1 {
			movers = []string{"shovel", "dlqt"}
		}
		for _, who := range movers {
			var r measure.Run
			if who == "dlqt" {
				r, err = measure.Command([]string{"bin/dlqt", "--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost,
					"--journal", filepath.Join(journal, "journal.db"), "--config", config,
					"replay", from, "--where", "reason=published", "--to", ":" + to, "--yes", // no --limit: the whole group, as a responder runs it
					// The canary and its watch are dlqt's and the Shovel
					// has none: 5 at 5 msg/s (0.8 s; 4 s at the default
					// 1 msg/s), watched 1 s, and the rate ceiling out of
					// the way, so the move itself is what is compared.
					"--canary", "5", "--canary-rate", "5", "--observe", "1s", "--baseline", "0s", "--rate", "1000000"})
				if err == nil {
					err = q.waitMoved(from, to, n)
				}
				dl = append(dl, r)
			} else {
				r, err = shovel(cfg, q, from, to, n)
				sh = append(sh, r)
			}
			if err != nil {
				return fmt.Errorf("%s moving %s to %s: %w", who, from, to, err)
			}
			fmt.Fprintf(os.Stderr, "  %s %s -> %s: %.2f s, %.1f MiB\n", who, from, to, r.Wall.Seconds(), measure.MiB(r.RSSKB))
			from, to = to, from
		}
		fmt.Printf("%-6d %12.2f %12.1f %12.2f\n", i+1, dl[i].Wall.Seconds(), measure.MiB(dl[i].RSSKB), sh[i].Wall.Seconds())
	}
	md, ms := measure.Median(dl), measure.Median(sh)
	fmt.Printf("%-6s %12.2f %12.1f %12.2f\n", "median", md.Wall.Seconds(), measure.MiB(md.RSSKB), ms.Wall.Seconds())
	fmt.Printf("dlqt replay/Shovel: time %.2fx (%.0f against %.0f msg/s); dlqt peak RSS %.1f MiB\n",
		md.Wall.Seconds()/ms.Wall.Seconds(), float64(n)/md.Wall.Seconds(), float64(n)/ms.Wall.Seconds(), measure.MiB(md.RSSKB))
	// The whole replay reads the group for its plan and runs a canary
	// first (its hold reads on during the canary); its bulk phase alone is
	// what moves like a Shovel.
	var bulk []float64
	for _, r := range dl {
		rate, err := pacedRate(r.Stdout)
		if err != nil {
			return err
		}
		bulk = append(bulk, rate)
	}
	slices.Sort(bulk)
	fmt.Printf("dlqt bulk phase (after the canary, publishes with confirms in flight): median %.0f msg/s, %.2fx the Shovel's rate over its whole move\n",
		bulk[len(bulk)/2], bulk[len(bulk)/2]/(float64(n)/ms.Wall.Seconds()))
	if err := q.checkIDs(from, n); err != nil {
		return err
	}
	// The discard of the whole group, as a responder drops it: one sweep
	// that holds every message, acks the selected one by one, and reads
	// the depth again to verify. The check above drained the queue: the
	// discard gets N of its own.
	const doomed = "bench.discard"
	if err := fill.Load(cfg, doomed, n, size); err != nil {
		return err
	}
	from = doomed
	r, err := measure.Command([]string{"bin/dlqt", "--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost,
		"--journal", filepath.Join(journal, "journal.db"), "--config", config,
		"discard", from, "--where", "reason=published", "--reason", "make bench", "--yes"})
	if err != nil {
		return fmt.Errorf("dlqt discarding %s: %w", from, err)
	}
	if left, err := q.depth(from); err != nil || left != 0 {
		return fmt.Errorf("after the discard %s holds %d messages (%v), want none", from, left, err)
	}
	fmt.Printf("dlqt discard of %d: %.2f s (%.0f msg/s), peak RSS %.1f MiB\n", n, r.Wall.Seconds(), float64(n)/r.Wall.Seconds(), measure.MiB(r.RSSKB))
	return discardInterleaved(cfg, q, journal, config, measure.EnvInt("BENCH_INTERLEAVED_N", 20000), size)
}

// discardInterleaved discards one group of five, every fifth message of
// a queue of n (reason code TIMEOUT, bench/internal/fill): each ack falls
// behind unsettled messages, which a 3.10 classic queue settles at a cost
// that grows with the queue (20,000 of 100,000 took 568 s by hand), unlike
// the whole group's acks, each of the oldest delivery. settleEveryFifth
// is the reference.
func discardInterleaved(cfg broker.Config, q *queues, journal, config string, n, size int) error {
	if n == 0 {
		return nil
	}
	const from = "bench.interleaved"
	if err := fill.Load(cfg, from, n, size); err != nil {
		return err
	}
	r, err := measure.Command([]string{"bin/dlqt", "--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost,
		"--journal", filepath.Join(journal, "journal.db"), "--config", config,
		"discard", from, "--where", "reason_code=TIMEOUT", "--reason", "make bench", "--yes"})
	if err != nil {
		return fmt.Errorf("dlqt discarding every fifth message of %s: %w", from, err)
	}
	if left, err := q.depth(from); err != nil || left != n-n/5 {
		return fmt.Errorf("after the discard %s holds %d messages (%v), want %d", from, left, err, n-n/5)
	}
	fmt.Printf("dlqt discard of one group interleaved with four others (every fifth of %d): %.2f s (%.0f msg/s), peak RSS %.1f MiB\n",
		n, r.Wall.Seconds(), float64(n/5)/r.Wall.Seconds(), measure.MiB(r.RSSKB))
	const raw = "bench.interleaved.raw"
	if err := fill.Load(cfg, raw, n, size); err != nil {
		return err
	}
	wall, err := q.settleEveryFifth(raw, n, rawSlice)
	if err != nil {
		return fmt.Errorf("raw amqp091-go discard of every fifth message of %s: %w", raw, err)
	}
	fmt.Printf("raw amqp091-go, the same discard on one channel per %d deliveries: %.2f s; dlqt/raw %.2fx\n",
		rawSlice, wall.Seconds(), r.Wall.Seconds()/wall.Seconds())
	return replayInterleaved(cfg, q, journal, config, n, size)
}

// replayInterleaved replays the same group of five, every fifth message
// of a queue of n, to a queue of its own: its acks fall behind the four
// other groups' messages as the discard's do, until the replay gives them
// back as its acks pass them (broker heldSources.giveBackBefore; every
// fifth of 100,000 took 316 s by hand before, 28 s after).
func replayInterleaved(cfg broker.Config, q *queues, journal, config string, n, size int) error {
	const from, to = "bench.interleaved.replay", "bench.interleaved.dest"
	if err := fill.Load(cfg, from, n, size); err != nil {
		return err
	}
	if err := q.declare(to); err != nil {
		return err
	}
	r, err := measure.Command([]string{"bin/dlqt", "--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost,
		"--journal", filepath.Join(journal, "journal.db"), "--config", config,
		"replay", from, "--where", "reason_code=TIMEOUT", "--to", ":" + to, "--yes",
		"--canary", "5", "--canary-rate", "5", "--observe", "1s", "--baseline", "0s", "--rate", "1000000"})
	if err == nil {
		err = q.waitDepths(from, n-n/5, to, n/5)
	}
	if err != nil {
		return fmt.Errorf("dlqt replaying every fifth message of %s: %w", from, err)
	}
	fmt.Printf("dlqt replay of one group interleaved with four others (every fifth of %d): %.2f s (%.0f msg/s), peak RSS %.1f MiB\n",
		n, r.Wall.Seconds(), float64(n/5)/r.Wall.Seconds(), measure.MiB(r.RSSKB))
	return nil // the vhost goes at the end
}

// rawSlice is how many deliveries the raw reference holds on one channel.
const rawSlice = 2048

// settleEveryFifth is the reference for discardInterleaved: the whole
// queue of n held unacked, slice deliveries on each channel (consumers one
// after the other, each with a prefetch of its slice, so the queue's order
// is channel by channel), once all are held every fifth (reason code TIMEOUT) is acked and the rest requeued with one
// Nack(0, multiple, requeue) per channel, timed until the queue holds the
// rest. A broker walks a channel's unacked deliveries from the oldest to
// find the one an ack names, in the channel (rabbit_channel's collect_acks)
// and in the queue (rabbit_queue_consumers' subtract_acks): on one channel
// holding the whole queue each ack of an interleaved group walks past every
// unsettled message before it, so the cost grows with the square of the
// queue; slices bound each walk.
func (q *queues) settleEveryFifth(queue string, n, slice int) (time.Duration, error) {
	start := time.Now()
	var chans []*amqp.Channel
	chosen := map[*amqp.Channel][]uint64{}
	defer func() {
		for _, ch := range chans {
			ch.Close()
		}
	}()
	for got := 0; got < n; {
		ch, err := q.conn.Channel()
		if err != nil {
			return 0, err
		}
		chans = append(chans, ch)
		want := min(slice, n-got)
		if err := ch.Qos(want, 0, false); err != nil {
			return 0, err
		}
		ds, err := ch.Consume(queue, "raw", false, false, false, false, nil)
		if err != nil {
			return 0, err
		}
		for i := 0; i < want; i++ {
			d, ok := <-ds
			if !ok {
				return 0, fmt.Errorf("the consumer ended after %d of %d", got+i, n)
			}
			if id, _ := strconv.Atoi(strings.TrimPrefix(d.MessageId, "bench-")); id%5 == 1 { // TIMEOUT, as dlqt's
				chosen[ch] = append(chosen[ch], d.DeliveryTag)
			}
		}
		if err := ch.Cancel("raw", false); err != nil {
			return 0, err
		}
		got += want
	}
	for _, ch := range chans { // the whole queue held, as dlqt holds it
		for _, tag := range chosen[ch] {
			if err := ch.Ack(tag, false); err != nil {
				return 0, err
			}
		}
		if err := ch.Nack(0, true, true); err != nil {
			return 0, err
		}
	}
	for {
		left, err := q.depth(queue)
		if err != nil {
			return 0, err
		}
		if left == n-n/5 {
			return time.Since(start), nil
		}
		if time.Since(start) > time.Duration(n)*10*time.Millisecond+time.Minute {
			return 0, fmt.Errorf("%s holds %d messages, want %d", queue, left, n-n/5)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// shovel moves from's n messages to queue to with a dynamic Shovel that
// deletes itself once it moved what from held when it started, and times
// it until to holds n and from none.
func shovel(cfg broker.Config, q *queues, from, to string, n int) (measure.Run, error) {
	rh, err := rabbithole.NewClient(cfg.MgmtURL, "guest", "guest")
	if err != nil {
		return measure.Run{}, err
	}
	url, err := cfg.VhostURL()
	if err != nil {
		return measure.Run{}, err
	}
	const name = "dlqt-bench-move"
	start := time.Now()
	res, err := rh.DeclareShovel(cfg.Vhost, name, rabbithole.ShovelDefinition{
		SourceURI: rabbithole.URISet{url}, SourceQueue: from, SourceProtocol: "amqp091",
		DestinationURI: rabbithole.URISet{url}, DestinationQueue: to, DestinationProtocol: "amqp091",
		AckMode: "on-confirm", SourceDeleteAfter: "queue-length",
	})
	if err != nil {
		if res != nil && (res.StatusCode == http.StatusBadRequest || res.StatusCode == http.StatusNotFound) {
			err = fmt.Errorf("%w (is the Shovel plugin on? rabbitmq-plugins enable rabbitmq_shovel)", err)
		}
		return measure.Run{}, err
	}
	defer rh.DeleteShovel(cfg.Vhost, name)
	if err := q.waitMoved(from, to, n); err != nil {
		return measure.Run{}, err
	}
	return measure.Run{Wall: time.Since(start), RSSKB: 1}, nil
}

// queues asks the broker for queue depths on a connection of its own.
type queues struct{ conn *amqp.Connection }

func openQueues(cfg broker.Config) (*queues, error) {
	conn, err := fill.Dial(cfg)
	if err != nil {
		return nil, err
	}
	return &queues{conn: conn}, nil
}

func (q *queues) declare(name string) error {
	ch, err := q.conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	_, err = ch.QueueDeclare(name, true, false, false, false, nil)
	return err
}

func (q *queues) depth(name string) (int, error) {
	ch, err := q.conn.Channel()
	if err != nil {
		return 0, err
	}
	defer ch.Close()
	d, err := ch.QueueDeclarePassive(name, true, false, false, false, nil)
	return d.Messages, err
}

// waitMoved waits until to holds n ready messages and from none.
func (q *queues) waitMoved(from, to string, n int) error {
	deadline := time.Now().Add(2*time.Minute + time.Duration(n)*time.Millisecond)
	for {
		f, err := q.depth(from)
		if err != nil {
			return err
		}
		t, err := q.depth(to)
		if err != nil {
			return err
		}
		if f == 0 && t == n {
			return nil
		}
		if t > n {
			return fmt.Errorf("%s holds %d messages, more than the %d moved", to, t, n)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s holds %d and %s %d, want %d and 0", to, t, from, f, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitDepths waits until queue a holds na ready messages and b nb, as
// waitMoved does.
func (q *queues) waitDepths(a string, na int, b string, nb int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		x, err := q.depth(a)
		if err != nil {
			return err
		}
		y, err := q.depth(b)
		if err != nil {
			return err
		}
		if x == na && y == nb {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s holds %d and %s %d, want %d and %d", a, x, b, y, na, nb)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkIDs consumes queue (the benchmark is over) and checks that it holds
// the n ids loaded, each once.
func (q *queues) checkIDs(queue string, n int) error {
	ch, err := q.conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.Qos(1000, 0, false); err != nil {
		return err
	}
	ds, err := ch.ConsumeWithContext(context.Background(), queue, "", true, true, false, false, nil)
	if err != nil {
		return err
	}
	ids := make([]string, 0, n)
	for len(ids) < n {
		select {
		case d, ok := <-ds:
			if !ok {
				return errors.New("the channel closed during the check")
			}
			ids = append(ids, d.MessageId)
		case <-time.After(30 * time.Second):
			return fmt.Errorf("%s gave %d messages, want %d", queue, len(ids), n)
		}
	}
	slices.Sort(ids)
	for i, id := range ids {
		if id != fill.ID(i) {
			return fmt.Errorf("after the moves the ids differ from those loaded at %s (want %s): a message lost or twice", id, fill.ID(i))
		}
	}
	fmt.Printf("every id moved exactly once: %d in %s\n", n, queue)
	return nil
}

// pacedRate is the bulk phase's rate as dlqt replay reports it ("paced: N
// published in D, R msg/s").
func pacedRate(stdout string) (float64, error) {
	for line := range strings.Lines(stdout) {
		if rest, ok := strings.CutPrefix(line, "paced: "); ok {
			_, rate, ok := strings.Cut(rest, ", ")
			if v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rate), " msg/s"), 64); ok && err == nil {
				return v, nil
			}
		}
	}
	return 0, fmt.Errorf("dlqt replay reported no paced phase: %s", measure.LastLines(stdout, 5))
}
