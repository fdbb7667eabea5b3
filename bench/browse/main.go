// Command browse is the broker benchmark of make bench: it loads BENCH_N
// (default 100,000) parked messages of BENCH_SIZE (1,024) bytes into a vhost
// of its own, then, for BENCH_ROUNDS (3) rounds, alternating which goes
// first, runs dlqt's headless `groups --json` over the whole queue and the
// raw amqp091-go reader (bin/rawread: unlimited prefetch, hold, one
// Nack(multiple, requeue)), each under /usr/bin/time -v. It prints every
// round, the medians and the ratios, checks after every run that the queue
// is back to its depth, and at the end that it holds exactly the ids loaded,
// in order. Last, unless BENCH_TUI_N is 0, it loads BENCH_TUI_N (default
// 1,000,000) more into a queue of their own and times the raw reader and
// the TUI over them once each: how far the TUI reads, how fast, and its
// peak RSS. The vhost is deleted at the end.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/bench/internal/fill"
	"github.com/dlqt/dlqt/bench/internal/measure"
	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
)

const queue = "bench.dlq"

func main() {
	n, size, rounds := measure.EnvInt("BENCH_N", 100000), measure.EnvInt("BENCH_SIZE", 1024), measure.EnvInt("BENCH_ROUNDS", 3)
	cfg := broker.Config{AMQPURL: measure.EnvStr("DLQT_TEST_AMQP_URL", broker.DefaultAMQPURL), MgmtURL: measure.EnvStr("DLQT_TEST_MGMT_URL", broker.DefaultMgmtURL)}
	var b [4]byte
	_, _ = rand.Read(b[:])
	cfg.Vhost = "dlqt-bench-" + hex.EncodeToString(b[:])
	err := bench(cfg, n, size, rounds)
	if derr := cleanUp(cfg); derr != nil && err == nil {
		err = derr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func bench(cfg broker.Config, n, size, rounds int) error {
	fmt.Printf("browse benchmark: %d x %d B in vhost %s, %d rounds\n", n, size, cfg.Vhost, rounds)
	start := time.Now()
	if err := fill.Load(cfg, queue, n, size); err != nil {
		return err
	}
	fmt.Printf("loaded in %s\n", time.Since(start).Round(time.Millisecond))
	url, err := cfg.VhostURL()
	if err != nil {
		return err
	}
	dlqt := []string{"bin/dlqt", "--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost, "groups", queue, "--json"}
	raw := []string{"bin/rawread", "-url", url, "-queue", queue, "-n", strconv.Itoa(n)}
	var dl, rw []measure.Run
	fmt.Printf("%-6s %12s %12s %12s %12s\n", "round", "dlqt s", "dlqt MiB", "raw s", "raw MiB")
	for i := range rounds {
		order := [][]string{dlqt, raw}
		if i%2 == 1 {
			order = [][]string{raw, dlqt}
		}
		for _, argv := range order {
			r, err := measure.Command(argv)
			if err != nil {
				return err
			}
			if argv[0] == "bin/dlqt" {
				dl = append(dl, r)
			} else {
				rw = append(rw, r)
			}
			// said at once, so a later failure does not lose it
			fmt.Fprintf(os.Stderr, "  %s: %.2f s, %.1f MiB\n", argv[0], r.Wall.Seconds(), measure.MiB(r.RSSKB))
			if err := waitDepth(cfg, n); err != nil {
				return fmt.Errorf("after %s: %w", argv[0], err)
			}
		}
		fmt.Printf("%-6d %12.2f %12.1f %12.2f %12.1f\n", i+1, dl[i].Wall.Seconds(), measure.MiB(dl[i].RSSKB), rw[i].Wall.Seconds(), measure.MiB(rw[i].RSSKB))
	}
	var firsts []measure.Run
	for range rounds {
		d, err := firstOut(append(dlqt[:len(dlqt)-3:len(dlqt)-3], "messages", queue, "--json"))
		if err != nil {
			return err
		}
		firsts = append(firsts, measure.Run{Wall: d, RSSKB: 1})
		if err := waitDepth(cfg, n); err != nil {
			return fmt.Errorf("after an interrupted messages --json: %w", err)
		}
	}
	fmt.Printf("first message out of dlqt messages --json (then interrupted): median %s\n", measure.Median(firsts).Wall.Round(time.Millisecond))
	md, mr := measure.Median(dl), measure.Median(rw)
	fmt.Printf("%-6s %12.2f %12.1f %12.2f %12.1f\n", "median", md.Wall.Seconds(), measure.MiB(md.RSSKB), mr.Wall.Seconds(), measure.MiB(mr.RSSKB))
	fmt.Printf("dlqt/raw: time %.2fx (speed %.2fx), peak RSS %.2fx\n",
		md.Wall.Seconds()/mr.Wall.Seconds(), mr.Wall.Seconds()/md.Wall.Seconds(), float64(md.RSSKB)/float64(mr.RSSKB))
	if err := benchTUI(cfg, n, rounds, mr); err != nil {
		return err
	}
	if err := checkIDs(cfg, n); err != nil {
		return err
	}
	return benchTUILarge(cfg, measure.EnvInt("BENCH_TUI_N", 1000000), size)
}

// largeQueue holds the messages of the TUI's large round.
const largeQueue = "bench.large"

// benchTUILarge loads n messages of size bytes into a queue of their own
// and reads them once with the raw reader and once in the TUI; the
// first queue is deleted before, so the broker holds only these.
func benchTUILarge(cfg broker.Config, n, size int) error {
	if n <= 0 {
		return nil
	}
	if err := deleteQueue(cfg, queue); err != nil {
		return err
	}
	fmt.Printf("TUI large round: %d x %d B in queue %s\n", n, size, largeQueue)
	start := time.Now()
	if err := fill.Load(cfg, largeQueue, n, size); err != nil {
		return err
	}
	fmt.Printf("loaded in %s\n", time.Since(start).Round(time.Millisecond))
	url, err := cfg.VhostURL()
	if err != nil {
		return err
	}
	raw, err := measure.Command([]string{"bin/rawread", "-url", url, "-queue", largeQueue, "-n", strconv.Itoa(n)})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "  bin/rawread: %.2f s, %.1f MiB\n", raw.Wall.Seconds(), measure.MiB(raw.RSSKB))
	if err := waitQueueDepth(cfg, largeQueue, n); err != nil {
		return fmt.Errorf("after the raw reader: %w", err)
	}
	r, err := measureTUI(cfg, largeQueue)
	if err != nil {
		return fmt.Errorf("TUI: %w", err)
	}
	fmt.Printf("TUI at %d: read done %.2f s (%.2fx the raw reader's %.2f s, %.1f MiB), %d messages grouped (%.1f%%); peak RSS %.1f MiB (sampled: anonymous %.1f MiB, file-backed %.1f MiB)\n",
		n, r.all.Seconds(), r.all.Seconds()/raw.Wall.Seconds(), raw.Wall.Seconds(), measure.MiB(raw.RSSKB), r.grouped, 100*float64(r.grouped)/float64(n),
		measure.MiB(r.rssKB), measure.MiB(r.anonKB), measure.MiB(r.fileKB))
	fmt.Printf("TUI title at the end: %s\n", r.title)
	if err := waitQueueDepth(cfg, largeQueue, n); err != nil {
		return fmt.Errorf("after the TUI: %w", err)
	}
	return deleteQueue(cfg, largeQueue)
}

// deleteQueue deletes the queues of cfg's vhost named, on a connection of
// its own.
func deleteQueue(cfg broker.Config, names ...string) error {
	conn, err := fill.Dial(cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, err := ch.QueueDelete(name, false, false, false); err != nil {
			return err
		}
	}
	return nil
}

// benchTUI runs the TUI rounds (tui.go) and prints them against the raw
// reader's median time of the same run.
func benchTUI(cfg broker.Config, n, rounds int, raw measure.Run) error {
	var firsts, alls, rss, anon, file []measure.Run
	var last tuiRun
	for range rounds {
		r, err := measureTUI(cfg, queue)
		if err != nil {
			return fmt.Errorf("TUI: %w", err)
		}
		fmt.Fprintf(os.Stderr, "  TUI: first groups %s, all read %s, %d grouped, %.1f MiB (sampled peaks: anonymous %.1f MiB, file-backed %.1f MiB)\n",
			r.first.Round(time.Millisecond), r.all.Round(time.Millisecond), r.grouped, measure.MiB(r.rssKB), measure.MiB(r.anonKB), measure.MiB(r.fileKB))
		if err := waitDepth(cfg, n); err != nil {
			return fmt.Errorf("after the TUI: %w", err)
		}
		firsts, alls, rss = append(firsts, measure.Run{Wall: r.first, RSSKB: 1}), append(alls, measure.Run{Wall: r.all, RSSKB: 1}), append(rss, measure.Run{Wall: 1, RSSKB: r.rssKB})
		anon, file = append(anon, measure.Run{Wall: 1, RSSKB: r.anonKB}), append(file, measure.Run{Wall: 1, RSSKB: r.fileKB})
		last = r
	}
	f, a := measure.Median(firsts).Wall, measure.Median(alls).Wall
	fmt.Printf("TUI (tmux 120x40, from process start): first groups on screen median %s; read done median %.2f s (%.2fx the raw reader's time), %d messages grouped; peak RSS median %.1f MiB\n",
		f.Round(time.Millisecond), a.Seconds(), a.Seconds()/raw.Wall.Seconds(), last.grouped, measure.MiB(measure.Median(rss).RSSKB))
	fmt.Printf("TUI peak RSS split (sampled every %s from /proc): anonymous median %.1f MiB, file-backed (the spill file's mmap) median %.1f MiB\n",
		tuiPoll, measure.MiB(measure.Median(anon).RSSKB), measure.MiB(measure.Median(file).RSSKB))
	fmt.Printf("TUI title at the end: %s\n", last.title)
	return nil
}

// firstOut is how long argv takes to write its first line; then it is
// interrupted (SIGINT: dlqt releases what it holds and exits) and its
// output drained.
func firstOut(argv []string) (time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	_, err = bufio.NewReader(out).ReadString('\n')
	took := time.Since(start)
	_ = cmd.Process.Signal(os.Interrupt)
	_, _ = io.Copy(io.Discard, out)
	_ = cmd.Wait()
	if err != nil {
		return 0, fmt.Errorf("%s wrote no line: %w", argv[0], err)
	}
	return took, nil
}

// waitDepth waits until the queue has n ready messages again.
func waitDepth(cfg broker.Config, n int) error { return waitQueueDepth(cfg, queue, n) }

// waitQueueDepth waits until name holds n ready messages.
func waitQueueDepth(cfg broker.Config, name string, n int) error {
	conn, err := fill.Dial(cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	// A busy broker requeues a million released messages in minutes.
	deadline := time.Now().Add(2*time.Minute + time.Duration(n)*time.Millisecond)
	for {
		depth := -1
		ch, err := conn.Channel()
		if err == nil {
			var q amqp.Queue
			if q, err = ch.QueueDeclarePassive(name, true, false, false, false, nil); err == nil {
				depth = q.Messages
			}
			ch.Close()
		}
		if depth == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("queue holds %d ready messages, not %d (%v)", depth, n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkIDs reads the whole queue once more, streamed, and compares its ids
// with those loaded, in order.
func checkIDs(cfg broker.Config, n int) error {
	l, err := broker.Dial(context.Background(), cfg)
	if err != nil {
		return err
	}
	defer l.Close()
	ids := make([]string, 0, n)
	_, err = l.Browse(context.Background(), queue, triage.BrowseOptions{Each: func(m triage.Message) error {
		ids = append(ids, m.Properties.MessageID)
		return nil
	}})
	if err != nil {
		return err
	}
	want := make([]string, n)
	for i := range want {
		want[i] = fill.ID(i)
	}
	if !slices.Equal(ids, want) {
		return fmt.Errorf("after the rounds the queue holds %d ids, not the %d loaded in order", len(ids), n)
	}
	fmt.Printf("queue intact: %d ids, in the order loaded\n", n)
	return nil
}

// cleanUp deletes the queue over AMQP first (a vhost delete of a million
// messages outlasts the management client's timeout on a busy broker),
// then the vhost, a few times if need be.
func cleanUp(cfg broker.Config) error {
	_ = deleteQueue(cfg, queue, largeQueue) // the vhost's delete below is what counts
	var err error
	for range 5 {
		if err = broker.DeleteVhost(cfg); err == nil {
			return nil
		}
		time.Sleep(2 * time.Second)
	}
	return err
}
