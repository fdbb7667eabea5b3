package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
	"github.com/dlqt/dlqt/internal/journal"
)

// dlqt is killed with kill -9 in the middle of a --where discard, after it
// journaled the ids the filter resolved to and while its acks are being
// applied: the broker keeps some acks, puts the rest back. The journal's
// selection still names exactly the selected ids; `messages --json` marks
// exactly the selected ones still in the queue as selected by an
// interrupted discard (nothing else), nothing not selected is lost, and a
// second run of the same discard takes the rest and clears the marks. The
// kill comes at a few delays after the selection was journaled, so that
// it lands before, during and after the acks went out.
func TestADiscardKilledDuringItsAcksSaysWhichAreBack(t *testing.T) {
	brokertest.SkipShort(t)
	n := privnode.Start(t)
	for _, delay := range []time.Duration{0, 40 * time.Millisecond, 120 * time.Millisecond} {
		t.Run(fmt.Sprintf("kill %s after the selection", delay), func(t *testing.T) {
			discardKilledAfter(t, n, delay)
		})
	}
}

func discardKilledAfter(t *testing.T, n *privnode.Node, delay time.Duration) {
	cfg := n.NewVhost("discard-kill")
	// 6,000, every other one selected: the kill at 120 ms still lands
	// during the acks (12,000 put 4,444 of 6,000 back at 120 ms, and took
	// 104 s of make test where this takes a third of it).
	const total = 6000
	acme, others := parkTenants(t, cfg, "orders.parking", total)
	jpath := filepath.Join(t.TempDir(), "journal.db")
	env := append(brokerEnv(t, cfg), "DLQT_JOURNAL="+jpath)
	args := []string{"--limit", "20000", "discard", "orders.parking", "--where", "tenant=acme", "--reason", "tenant acme offboarded", "--yes"}

	killDiscardOnceSelected(t, env, jpath, args, delay)
	settled := waitDepthSettles(t, cfg, "orders.parking")
	es := journalEntries(t, jpath)
	var selected []string
	for _, e := range es {
		switch e.Details["step"] {
		case "selected":
			selected = e.MessageIDs
		case "outcome":
			t.Fatalf("the discard journaled its outcome before the kill: %+v", e.Details)
		}
	}
	slices.Sort(selected)
	if !slices.Equal(selected, acme) {
		t.Fatalf("the journal's selection has %d ids, want the %d of tenant acme", len(selected), len(acme))
	}

	left, marked, stderr := messagesMarked(t, env, "orders.parking")
	var back []string
	for _, id := range left {
		if slices.Contains(acme, id) {
			back = append(back, id)
		}
	}
	t.Logf("after the kill: %d in the queue (settled at %d), %d of %d selected are back, %d marked", len(left), settled, len(back), len(acme), len(marked))
	if missing := missingFrom(others, left); len(missing) > 0 {
		t.Errorf("%d messages not selected were lost: %v", len(missing), missing[:min(len(missing), 5)])
	}
	if !slices.Equal(marked, back) {
		t.Errorf("marked %d as selected by the interrupted discard, want exactly the %d selected still there", len(marked), len(back))
	}
	if said := countSaidBack(stderr); said != len(back) {
		t.Errorf("stderr says %d are back (a line per chunk read), want %d: %s", said, len(back), firstLine(stderr))
	}

	r := runDlqt(t, env, args...)
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("discarded %d message(s)", len(back))) {
		t.Fatalf("the second run: exit %d: %s%s", r.code, firstLine(r.stdout), r.stderr)
	}
	left, marked, _ = messagesMarked(t, env, "orders.parking")
	if len(marked) > 0 || len(missingFrom(others, left)) > 0 || len(left) != len(others) {
		t.Errorf("after the second run: %d left, %d marked; want the %d others, none marked", len(left), len(marked), len(others))
	}
}

// parkTenants parks total persistent messages in a durable classic queue,
// every other one of tenant acme; it returns both id lists, sorted.
func parkTenants(t *testing.T, cfg broker.Config, queue string, total int) (acme, others []string) {
	t.Helper()
	ch, err := brokertest.Dial(t, cfg).Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if _, err := ch.QueueDeclare(queue, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	var last *amqp.DeferredConfirmation
	for i := range total {
		id, tenant := fmt.Sprintf("m-%05d", i), "globex"
		if i%2 == 0 {
			tenant = "acme"
			acme = append(acme, id)
		} else {
			others = append(others, id)
		}
		last, err = ch.PublishWithDeferredConfirmWithContext(context.Background(), "", queue, false, false, amqp.Publishing{
			MessageId: id, DeliveryMode: amqp.Persistent, ContentType: "application/json",
			Headers: amqp.Table{"tenant": tenant}, Body: []byte(`{"order":1}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !last.Wait() {
		t.Fatal("the broker nacked a parked message")
	}
	return acme, others
}

// killDiscardOnceSelected runs dlqt with args and kills it with SIGKILL
// delay after the journal holds the ids its selection resolved to
// (journaled before the first ack).
func killDiscardOnceSelected(t *testing.T, env []string, jpath string, args []string, delay time.Duration) {
	t.Helper()
	interruptOnceJournaled(t, env, args, "its selection", func() bool { return hasSelectedEntry(jpath) }, delay, func(cmd *exec.Cmd) {
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	})
}

// interruptOnceJournaled runs dlqt with args, calls interrupt delay after
// journaled (what) holds and waits until dlqt has ended.
func interruptOnceJournaled(t *testing.T, env, args []string, what string, journaled func() bool, delay time.Duration, interrupt func(*exec.Cmd)) {
	t.Helper()
	cmd := exec.Command(dlqtBin, args...)
	cmd.Env = env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.After(60 * time.Second)
	for !journaled() {
		select {
		case <-exited:
			t.Fatalf("dlqt ended before it journaled %s: %s", what, out.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("not journaled in 60 s: %s: %s", what, out.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	time.Sleep(delay)
	interrupt(cmd)
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("dlqt did not end after the interruption: %s", out.String())
	}
}

// hasSelectedEntry reads the journal without holding dlqt up (a shared
// lock, else a copy of the file).
func hasSelectedEntry(path string) bool {
	return slices.ContainsFunc(entriesNow(path), func(e journal.Entry) bool { return e.Details["step"] == "selected" })
}

// entriesNow are the journal's entries, read without holding dlqt up (nil
// while the journal is busy).
func entriesNow(path string) []journal.Entry {
	j, err := journal.OpenReadOnly(path, 10*time.Millisecond)
	if err != nil {
		return nil
	}
	defer j.Close()
	es, err := j.Entries()
	if err != nil {
		return nil
	}
	return es
}

// waitDepthSettles waits until the broker has put back what the killed
// connection held: the ready count stops moving for two seconds.
func waitDepthSettles(t *testing.T, cfg broker.Config, queue string) int {
	t.Helper()
	conn := brokertest.Dial(t, cfg)
	last, since := -1, time.Now()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		d := brokertest.Depth(t, conn, queue)
		if d != last {
			last, since = d, time.Now()
		}
		if time.Since(since) >= 2*time.Second {
			return last
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the depth of %s kept moving for 60 s", queue)
	return last
}

// messagesMarked lists the queue through `dlqt messages --json`: every id,
// the ids marked as selected by an interrupted discard (both sorted), and
// what dlqt said on stderr.
func messagesMarked(t *testing.T, env []string, queue string) (ids, marked []string, stderr string) {
	t.Helper()
	r := runDlqt(t, env, "--limit", "20000", "messages", queue, "--json")
	if r.code != 0 {
		t.Fatalf("messages: exit %d: %s", r.code, r.stderr)
	}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row struct {
			ID          string          `json:"id"`
			Interrupted json.RawMessage `json:"interrupted_discard"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("messages --json line: %v", err)
		}
		ids = append(ids, row.ID)
		if len(row.Interrupted) > 0 {
			marked = append(marked, row.ID)
		}
	}
	slices.Sort(ids)
	slices.Sort(marked)
	return ids, marked, r.stderr
}

// missingFrom are the ids of want not in got (sorted).
func missingFrom(want, got []string) []string {
	var out []string
	for _, id := range want {
		if _, ok := slices.BinarySearch(got, id); !ok {
			out = append(out, id)
		}
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

var saidBackRe = regexp.MustCompile(`(\d+) message\(s\) selected by a discard that never journaled its outcome are still in orders\.parking`)

// countSaidBack adds up what dlqt said on stderr about messages of an
// interrupted discard still there (messages --json says it per chunk).
func countSaidBack(stderr string) int {
	n := 0
	for _, m := range saidBackRe.FindAllStringSubmatch(stderr, -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	return n
}
