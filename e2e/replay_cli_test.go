package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// replayBed is one test's vhost with a small retry topology: exchange
// "orders" routes order.created to queue "orders", whose dead letters go
// through fanout "orders.dlx" to the parking queue "orders.parking". Its
// own amqp091-go connection builds it and reads the queues, independently
// of dlqt.
type replayBed struct {
	t       *testing.T
	cfg     broker.Config
	conn    *amqp.Connection
	ch      *amqp.Channel
	env     []string
	journal string
}

const (
	bedParking = "orders.parking"
	bedOrders  = "orders"
)

func newReplayBed(t *testing.T, prefix string) *replayBed {
	t.Helper()
	return newReplayBedOn(t, brokertest.NewVhost(t, prefix))
}

// newReplayBedOn is newReplayBed in a vhost the caller made (a private node's).
func newReplayBedOn(t *testing.T, cfg broker.Config) *replayBed {
	t.Helper()
	u, err := url.Parse(cfg.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path, u.RawPath = "/"+cfg.Vhost, "/"+url.PathEscape(cfg.Vhost)
	conn, err := amqp.Dial(u.String())
	if err != nil {
		t.Fatalf("dial test vhost: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	b := &replayBed{t: t, cfg: cfg, conn: conn, ch: ch, journal: filepath.Join(t.TempDir(), "journal.db")}
	b.env = append(brokerEnv(t, cfg), "DLQT_JOURNAL="+b.journal)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ch.ExchangeDeclare("orders", "direct", true, false, false, false, nil))
	must(ch.ExchangeDeclare("orders.dlx", "fanout", true, false, false, false, nil))
	_, err = ch.QueueDeclare(bedParking, true, false, false, false, nil)
	must(err)
	must(ch.QueueBind(bedParking, "", "orders.dlx", false, nil))
	_, err = ch.QueueDeclare(bedOrders, true, false, false, false, amqp.Table{"x-dead-letter-exchange": "orders.dlx"})
	must(err)
	must(ch.QueueBind(bedOrders, "order.created", "orders", false, nil))
	return b
}

// park publishes n orders and rejects each once, so all n sit in the
// parking queue with a broker death; it returns their ids.
func (b *replayBed) park(n int) []string {
	b.t.Helper()
	ids := make([]string, n)
	var last *amqp.DeferredConfirmation
	for i := range n {
		ids[i] = fmt.Sprintf("order-%05d", i)
		dc, err := b.ch.PublishWithDeferredConfirmWithContext(context.Background(), "orders", "order.created", true, false, amqp.Publishing{
			MessageId: ids[i], ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"tenant": "acme"},
			Body:    []byte(fmt.Sprintf(`{"message_id":%q,"event_type":"order.created","amount":%d}`, ids[i], i)),
		})
		if err != nil {
			b.t.Fatal(err)
		}
		last = dc
	}
	if last != nil && !last.Wait() {
		b.t.Fatal("broker nacked a test message")
	}
	b.waitDepth(bedOrders, n)
	stop := b.rejectAll(bedOrders)
	b.waitDepth(bedParking, n)
	stop()
	return ids
}

// rejectAll consumes queue and rejects every message without requeue (its
// DLX parks it), until the returned stop is called.
func (b *replayBed) rejectAll(queue string) (stop func()) {
	b.t.Helper()
	ch, err := b.conn.Channel()
	if err != nil {
		b.t.Fatal(err)
	}
	ds, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	go func() {
		for d := range ds {
			d.Nack(false, false)
		}
	}()
	return func() { ch.Close() }
}

func (b *replayBed) depth(queue string) int { return brokertest.Depth(b.t, b.conn, queue) }

func (b *replayBed) waitDepth(queue string, want int) { brokertest.WaitDepth(b.t, b.conn, queue, want) }

// read holds every message of queue, records it and puts it all back.
func (b *replayBed) read(queue string) []amqp.Delivery {
	b.t.Helper()
	n := b.depth(queue)
	ch, err := b.conn.Channel()
	if err != nil {
		b.t.Fatal(err)
	}
	defer ch.Close() // requeues everything read
	ds, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	var out []amqp.Delivery
	for len(out) < n {
		select {
		case d := <-ds:
			out = append(out, d)
		case <-time.After(5 * time.Second):
			b.t.Fatalf("read %s: %d of %d messages", queue, len(out), n)
		}
	}
	return out
}

func messageIDs(ds []amqp.Delivery) []string {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.MessageId
	}
	slices.Sort(ids)
	return ids
}

// verifyJournal runs `dlqt journal verify` on the test's journal, then
// opens it for the test's own questions.
func (b *replayBed) verifyJournal() *journal.Journal {
	b.t.Helper()
	if res := runDlqt(b.t, b.env, "journal", "verify"); res.code != 0 {
		b.t.Fatalf("dlqt journal verify exited %d: %s%s", res.code, res.stdout, res.stderr)
	}
	j, err := journal.Open(b.journal, time.Second)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { j.Close() })
	if err := j.Verify(); err != nil {
		b.t.Fatalf("journal verify: %v", err)
	}
	return j
}

var (
	pacedLine  = regexp.MustCompile(`paced: (\d+) published in \S+, ([0-9.]+) msg/s`)
	replayIDRe = regexp.MustCompile(`replay (rp-[0-9T]+-[0-9a-f]+)`)
)

// arrival is one message a destination consumer received, and when.
type arrival struct {
	d  amqp.Delivery
	at time.Time
}

// consume acks everything arriving at queue and records it, until the
// returned stop is called; stop returns what arrived, in order.
func (b *replayBed) consume(queue string) (stop func() []arrival) {
	b.t.Helper()
	ch, err := b.conn.Channel()
	if err != nil {
		b.t.Fatal(err)
	}
	ds, err := ch.Consume(queue, "", true, false, false, false, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	got := make(chan []arrival)
	go func() {
		var as []arrival
		for d := range ds {
			as = append(as, arrival{d, time.Now()})
		}
		got <- as
	}()
	return func() []arrival {
		ch.Close()
		return <-got
	}
}

func TestReplayDeliversExactlyTheParkedIDsAtThePacedRate(t *testing.T) {
	b := newReplayBed(t, "replay-paced")
	ids := b.park(1000)
	slices.Sort(ids)
	stop := b.consume(bedOrders) // the destination's consumer, now healthy

	res := runDlqt(t, b.env, "replay", bedParking, "--group", "rejected", "--rate", "200", "--canary", "5", "--observe", "1s", "--yes")
	if res.code != 0 {
		t.Fatalf("replay exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "resolved 1000, failed again 0, returned 0, untouched 0") {
		t.Errorf("result line missing:\n%s", res.stdout)
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.depth(bedOrders) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	arrived := stop()
	got := make([]amqp.Delivery, len(arrived))
	for i, a := range arrived {
		got[i] = a.d
	}
	if gotIDs := messageIDs(got); !slices.Equal(gotIDs, ids) {
		t.Fatalf("destination received %d messages, want exactly the 1000 parked ids once each", len(gotIDs))
	}
	if n := b.depth(bedParking); n != 0 {
		t.Errorf("parking queue still holds %d messages", n)
	}
	d := got[0]
	for _, h := range []string{"dlqt-replay-id", "dlqt-replayed-at", "dlqt-attempts", "dlqt-deaths", "x-death", "tenant"} {
		if _, ok := d.Headers[h]; !ok {
			t.Errorf("replayed message lacks header %s: %v", h, d.Headers)
		}
	}
	if !strings.HasPrefix(string(d.Body), `{"message_id":"`+d.MessageId+`"`) || d.ContentType != "application/json" || d.DeliveryMode != amqp.Persistent {
		t.Errorf("replayed message changed: %s %q %d", d.Body, d.ContentType, d.DeliveryMode)
	}

	// The rate dlqt reports for its paced phase...
	m := pacedLine.FindStringSubmatch(res.stdout)
	if m == nil {
		t.Fatalf("no paced line:\n%s", res.stdout)
	}
	n, _ := strconv.Atoi(m[1])
	reported, _ := strconv.ParseFloat(m[2], 64)
	// ...what each copy says of when it was sent (dlqt-replayed-at, the
	// publish's second): no whole second of the paced phase sent more than
	// the rate allows...
	paced := arrived[5:] // the canary's 5 arrive first, a second apart
	perSecond := map[int64]int{}
	var first, last int64
	for i, a := range paced {
		at, ok := a.d.Headers["dlqt-replayed-at"].(time.Time)
		if !ok {
			t.Fatalf("copy %s has no dlqt-replayed-at time: %v", a.d.MessageId, a.d.Headers["dlqt-replayed-at"])
		}
		sec := at.Unix()
		perSecond[sec]++
		if i == 0 || sec < first {
			first = sec
		}
		last = max(last, sec)
	}
	for sec := first + 1; sec < last; sec++ { // the first and last seconds are partial
		if perSecond[sec] > 220 {
			t.Errorf("second %d of the paced phase sent %d copies, want at most 200 (+10%%): %v", sec-first, perSecond[sec], perSecond)
		}
	}
	// ...and the rate the destination saw. The broker's delivery adds its
	// own jitter to that one: on 4.3 in a loaded CI run the first paced
	// copies came late and in a burst, and the destination saw 295 msg/s
	// of a phase published at 210. So it is held to a looser band, which
	// still tells a paced phase from an unpaced one (thousands a second).
	// The reported rate may fall short of --rate, never pass it: while a
	// batch's ids are journalled (an fsync per batch, a batch per 50 ms of
	// tokens) at most 100 ms of tokens gather (README, "what --rate
	// promises"), so journal writes slowed by a loaded disk lower the
	// average instead of bursting. In .ci/runs beside the other shards the
	// seconds went 202, 202, 187, 166, 159 (172.8 msg/s), then 70, 127,
	// 194, 154, 130, 49, 113, 158 (139.3). The floor, half the rate, still
	// tells a paced phase from a stalled one; the ceiling is the promise.
	seen := float64(len(paced)-1) / paced[len(paced)-1].at.Sub(paced[0].at).Seconds()
	if n != 995 || reported < 100 || reported > 220 || seen < 100 || seen > 400 {
		t.Errorf("paced phase: %d published at %.1f msg/s, destination saw %.1f msg/s; want 995 at 200 msg/s, at most +10%% and at least half (seen: 100-400)", n, reported, seen)
	}
	t.Logf("paced phase: %d messages, %.1f msg/s reported, %.1f msg/s seen at the destination, sent per second %v", n, reported, seen, perSecond)

	j := b.verifyJournal()
	if open, err := replay.Interrupted(j); err != nil || len(open) != 0 {
		t.Errorf("interrupted replays after a clean run: %v, %v", open, err)
	}
}

// replayKilledAt runs a headless replay of bedParking with args and kills
// it with SIGKILL once its paced phase has published n messages; it returns
// the replay id.
func (b *replayBed) replayKilledAt(n int, args ...string) (replayID string) {
	b.t.Helper()
	cmd := exec.Command(dlqtBin, append(append([]string{"replay", bedParking}, args...), "--yes")...)
	cmd.Env = b.env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	published := regexp.MustCompile(`running: published (\d+)/`)
	killed := false
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		if m := replayIDRe.FindStringSubmatch(line); m != nil && replayID == "" {
			replayID = m[1]
		}
		if m := published.FindStringSubmatch(line); m != nil {
			if got, _ := strconv.Atoi(m[1]); got >= n {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					b.t.Fatal(err)
				}
				killed = true
				break
			}
		}
	}
	cmd.Wait()
	if !killed || replayID == "" {
		b.t.Fatalf("never saw the replay running past %d (id %q); stdout:\n%s", n, replayID, out.String())
	}
	return replayID
}

func TestReplayKilledMidwayResumesWithoutLosingAMessage(t *testing.T) {
	b := newReplayBed(t, "replay-kill")
	ids := b.park(1000)

	// Kill once the paced phase has published a few hundred messages.
	replayID := b.replayKilledAt(300, "--group", "rejected", "--rate", "100", "--canary", "5", "--observe", "500ms")

	// Right after the kill the broker requeues what dlqt held: every id is
	// either at the destination or parked, none vanished.
	time.Sleep(500 * time.Millisecond)
	assertNoneLost(t, ids, b.read(bedOrders), b.read(bedParking))
	afterKill := b.depth(bedOrders)
	if afterKill == 0 || afterKill >= 1000 {
		t.Fatalf("the kill came at %d of 1000 replayed: not in the middle", afterKill)
	}

	j, err := journal.Open(b.journal, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	open, err := replay.Interrupted(j)
	j.Close()
	if err != nil || len(open) != 1 || open[0].ID != replayID {
		t.Fatalf("interrupted replays = %+v, %v; want %s", open, err, replayID)
	}

	res := runDlqt(t, b.env, "replay", "--resume", replayID)
	if res.code != 0 {
		t.Fatalf("resume exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "delivered twice") {
		t.Errorf("resume does not say a duplicate is possible:\n%s", res.stdout)
	}
	dest := b.read(bedOrders)
	assertNoneLost(t, ids, dest, nil)
	if n := b.depth(bedParking); n != 0 {
		t.Errorf("parking queue still holds %d messages after the resume", n)
	}
	t.Logf("killed after %d at the destination; after resume %d copies for 1000 ids (%d duplicates)", afterKill, len(dest), len(dest)-1000)
	jj := b.verifyJournal()
	if open, _ := replay.Interrupted(jj); len(open) != 0 {
		t.Errorf("still interrupted after the resume: %+v", open)
	}
}

// assertNoneLost checks that every id is in dest or parked (duplicates are
// allowed: at-least-once).
func assertNoneLost(t *testing.T, ids []string, dest, parked []amqp.Delivery) {
	t.Helper()
	seen := map[string]bool{}
	for _, d := range append(slices.Clone(dest), parked...) {
		seen[d.MessageId] = true
	}
	var lost []string
	for _, id := range ids {
		if !seen[id] {
			lost = append(lost, id)
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d message(s) lost: %v", len(lost), lost[:min(len(lost), 10)])
	}
}

func TestReplayCanaryStopsWhenTheDestinationRejectsAgain(t *testing.T) {
	b := newReplayBed(t, "replay-canary")
	ids := b.park(50)
	slices.Sort(ids)
	stop := b.rejectAll(bedOrders) // the destination's consumer still fails
	defer stop()

	res := runDlqt(t, b.env, "replay", bedParking, "--group", "rejected", "--rate", "50", "--canary", "5", "--observe", "10s", "--yes")
	if res.code == 0 {
		t.Fatalf("replay into a failing consumer exited 0:\n%s", res.stdout)
	}
	if !strings.Contains(res.stderr, "failed again") || !strings.Contains(res.stderr, "stopped") {
		t.Errorf("the stop does not say why:\n%s", res.stderr)
	}
	time.Sleep(300 * time.Millisecond)
	parked := b.read(bedParking)
	if got := messageIDs(parked); !slices.Equal(got, ids) {
		t.Fatalf("parking queue holds %v, want every one of the %d ids once", got, len(ids))
	}
	copies := 0
	for _, d := range parked {
		if _, ok := d.Headers["dlqt-replay-id"]; ok {
			copies++
		}
	}
	if copies == 0 || copies > 5 {
		t.Errorf("%d failed-again copies are parked, want between 1 and the canary's 5", copies)
	}
	if !strings.Contains(res.stdout, fmt.Sprintf("failed again %d", copies)) || !strings.Contains(res.stdout, fmt.Sprintf("untouched %d", 50-copies)) {
		t.Errorf("result does not account for every message:\n%s", res.stdout)
	}
	b.verifyJournal()
}

func TestReplayWithoutYesChangesNothing(t *testing.T) {
	b := newReplayBed(t, "replay-dry")
	b.park(10)
	res := runDlqt(t, b.env, "replay", bedParking, "--group", "rejected")
	t.Logf("dry run:\n%s", res.stdout)
	if res.code != 0 {
		t.Fatalf("dry run exited %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{"10 message(s) of orders.parking", "-> orders:order.created", "original route", "allowed: yes", "nothing was changed",
		`sample order-00000  rejected/-  { "message_id": "order-00000"`} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, res.stdout)
		}
	}
	if n := b.depth(bedParking); n != 10 {
		t.Errorf("a dry run changed the parking queue: %d messages", n)
	}
	res = runDlqt(t, b.env, "replay", bedParking, "--group", "rejected", "--to", "orders:elsewhere", "--dry-run")
	if res.code == 0 || !strings.Contains(res.stdout, "allowed: no") || !strings.Contains(res.stderr, "replay.allow") {
		t.Errorf("a destination outside replay.allow was not refused (exit %d):\n%s\n%s", res.code, res.stdout, res.stderr)
	}

	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte("replay:\n  allow: [\"orders:else*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = runDlqt(t, append(b.env, "DLQT_CONFIG="+config), "replay", bedParking, "--group", "rejected", "--to", "orders:elsewhere", "--yes", "--dry-run")
	if res.code != 0 || !strings.Contains(res.stdout, "allowed by replay.allow") || !strings.Contains(res.stdout, "nothing was changed") {
		t.Errorf("replay.allow from the config file did not allow the destination (exit %d):\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if n := b.depth(bedParking); n != 10 {
		t.Errorf("--dry-run with --yes changed the parking queue: %d messages", n)
	}
}

// A replay interrupted by Ctrl-C, or by the hangup of the session it runs
// in (an ssh connection that drops sends SIGHUP), stops as an abort: the
// copies in flight confirmed and their sources acked, the rest put back.
func TestReplayInterruptedByCtrlCPutsTheRestBackAndSaysSo(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) { replayInterruptedBy(t, sig) })
	}
}

func replayInterruptedBy(t *testing.T, sig syscall.Signal) {
	b := newReplayBed(t, "replay-sig")
	ids := b.park(20)
	slices.Sort(ids)

	cmd := exec.Command(dlqtBin, "replay", bedParking, "--group", "rejected", "--canary", "2", "--observe", "1m", "--yes")
	cmd.Env = b.env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var tail strings.Builder
	for sc.Scan() {
		tail.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), " observing: ") {
			cmd.Process.Signal(sig)
			break
		}
	}
	for sc.Scan() { // to EOF: dlqt exits after putting the rest back
		tail.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v after %v; stdout:\n%s\nstderr:\n%s", err, sig, stdout.String(), tail.String())
	}
	if !strings.Contains(stdout.String(), "resolved 2, failed again 0, returned 0, untouched 18") {
		t.Errorf("result:\n%s", stdout.String())
	}
	got := append(messageIDs(b.read(bedOrders)), messageIDs(b.read(bedParking))...)
	slices.Sort(got)
	if !slices.Equal(got, ids) {
		t.Errorf("after Ctrl-C the ids at the destination and parked are %v, want each of %v once", got, ids)
	}
	if b.depth(bedParking) != 18 {
		t.Errorf("parking queue holds %d, want the 18 never published", b.depth(bedParking))
	}
	if open, _ := replay.Interrupted(b.verifyJournal()); len(open) != 0 {
		t.Errorf("a replay stopped with Ctrl-C reads as interrupted: %+v", open)
	}
}

// A replay whose output nobody reads any more (dlqt replay ... | head, a
// pipe to a session that is gone) finishes its work: its writes fail, it
// is not killed by SIGPIPE half-way, with copies published and their
// sources not acked (by hand, a replay of 100,000 piped into head died
// after 43,594 and left 2,000 delivered twice).
func TestReplayWhoseOutputPipeIsClosedStillFinishes(t *testing.T) {
	b := newReplayBed(t, "replay-pipe")
	ids := b.park(300)
	slices.Sort(ids)
	cmd := exec.Command(dlqtBin, "replay", bedParking, "--group", "rejected", "--canary", "1", "--observe", "1s", "--baseline", "0s", "--rate", "1000", "--yes")
	cmd.Env = b.env
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR.Close() // nobody reads: dlqt's first write finds the pipe broken
	errR.Close()
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	errW.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("the replay with its output closed did not end within 2 minutes")
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("dlqt was killed by %v (exit %v) when its output pipe was closed", ws.Signal(), err)
	}
	if got := messageIDs(b.read(bedOrders)); !slices.Equal(got, ids) {
		t.Errorf("the destination holds %d messages, want each of the %d parked once", len(got), len(ids))
	}
	if n := b.depth(bedParking); n != 0 {
		t.Errorf("the parking queue still holds %d", n)
	}
	if open, _ := replay.Interrupted(b.verifyJournal()); len(open) != 0 {
		t.Errorf("the replay reads as interrupted in the journal: %+v", open)
	}
}
