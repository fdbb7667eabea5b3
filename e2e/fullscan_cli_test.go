package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
	"github.com/dlqt/dlqt/internal/cli"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// TestFullScanCLIGroupsTheWholeQueueOnlyWithConsent: without --yes, dlqt
// fullscan says what it would do and moves nothing; with it, the groups
// count every message, the queue holds the same ids in the same order,
// the journal has the decision and the outcome, and read-only mode
// refuses it.
func TestFullScanCLIGroupsTheWholeQueueOnlyWithConsent(t *testing.T) {
	brokertest.SkipShort(t)
	cfg := brokertest.NewVhost(t, "fullscan-cli")
	conn := brokertest.Dial(t, cfg)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("orders.parking", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	const n = 300
	for i := range n {
		code := []string{"address_invalid", "tax_missing", "timeout"}[i%3]
		body := fmt.Sprintf(`{"message_id":"ord-%04d","event_type":"order.created","failure":{"reason_code":%q}}`, i, code)
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", "orders.parking", true, false, amqp.Publishing{
			MessageId: fmt.Sprintf("ord-%04d", i), ContentType: "application/json", Body: []byte(body),
			Headers: amqp.Table{"x-death": []any{amqp.Table{"queue": "orders", "reason": "rejected", "count": int64(1),
				"time": time.Now().Add(-time.Hour), "exchange": "", "routing-keys": []any{"orders"}}}}})
		if err != nil || !dc.Wait() {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	jpath := filepath.Join(t.TempDir(), "journal.db")
	env := append(brokerEnv(t, cfg), "DLQT_JOURNAL="+jpath, "DLQT_ACTOR=ana@bastion")

	r := runDlqt(t, env, "fullscan", "orders.parking")
	if r.code != 0 || !strings.Contains(r.stderr, "republished to the tail") || !strings.Contains(r.stderr, "nothing moved; --yes runs it") {
		t.Fatalf("without --yes: exit %d: %s", r.code, r.stderr)
	}
	if r := runDlqt(t, env, "--read-only", "fullscan", "orders.parking", "--yes"); r.code != 2 || !strings.Contains(r.stderr, "read-only") {
		t.Fatalf("read-only: exit %d: %s", r.code, r.stderr)
	}
	before := queueIDs(t, cfg)

	rows := decodeJSON[[]cli.GroupRow](t, runDlqt(t, env, "fullscan", "orders.parking", "--yes", "--json", "--window", "16"))
	total := 0
	for _, g := range rows {
		total += g.Count
	}
	if len(rows) != 3 || total != n {
		t.Fatalf("%d groups counting %d messages, want 3 and %d", len(rows), total, n)
	}
	if after := queueIDs(t, cfg); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Fatalf("the queue changed: %d ids after, %d before", len(after), len(before))
	}
	j, err := journal.OpenReadOnly(jpath, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	es, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	inFlight := 0
	for _, e := range es {
		if e.Action != triage.ActionFullScan || e.Queue != "orders.parking" || e.Actor != "ana@bastion" {
			continue
		}
		if e.Details["step"] == "in-flight" { // each window's ids, before its copies were published
			inFlight += len(e.MessageIDs)
			continue
		}
		steps = append(steps, fmt.Sprintf("%v %v %v", e.Details["step"], e.Details["moved"], e.Details["whole"]))
	}
	if strings.Join(steps, ";") != fmt.Sprintf("decision <nil> <nil>;outcome %d true", n) || inFlight != n {
		t.Fatalf("journal steps %v, %d ids journaled in flight", steps, inFlight)
	}
}

// queueIDs are the message ids of orders.parking in order, read by a
// browse that puts them all back.
func queueIDs(t *testing.T, cfg interface{ VhostURL() (string, error) }) []string {
	t.Helper()
	u, err := cfg.VhostURL()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := amqp.Dial(u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for {
		d, ok, err := ch.Get("orders.parking", false)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		ids = append(ids, d.MessageId)
	}
	ch.Close() // every one goes back, in its place
	brokertest.WaitDepth(t, conn, "orders.parking", len(ids))
	return ids
}

// TestAnInterruptedFullScanLeavesNoSilentDuplicates (issue 23, item 3): a
// full scan is interrupted in the middle (kill -9 of dlqt, at two moments,
// and a close of its connections on a quorum queue). Nothing is lost; the
// copies whose originals were not acked are there twice, and the next
// dlqt fullscan removes exactly those, says how many, and says "moved
// all" only when the queue then holds each message once. Before, the
// extras stayed (255 of 20,000) and the next scan said "moved all 20255".
func TestAnInterruptedFullScanLeavesNoSilentDuplicates(t *testing.T) {
	brokertest.SkipShort(t)
	node := privnode.Start(t)
	kill := func(t *testing.T, cmd *exec.Cmd) {
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	closeConns := func(t *testing.T, cmd *exec.Cmd) { closeDlqtConnections(t, node.For(t), cmd) }
	for _, c := range []struct {
		name      string
		total     int
		args      amqp.Table
		delay     time.Duration
		interrupt func(*testing.T, *exec.Cmd)
	}{
		{"kill -9 of dlqt", 6000, nil, 0, kill},
		{"kill -9 of dlqt a little later", 6000, nil, 30 * time.Millisecond, kill},
		{"its connection closed, quorum queue", 6000, amqp.Table{"x-queue-type": "quorum"}, 0, closeConns},
	} {
		t.Run(c.name, func(t *testing.T) {
			fullScanInterrupted(t, node.For(t), c.total, c.args, c.delay, func(cmd *exec.Cmd) { c.interrupt(t, cmd) })
		})
	}
}

// closeDlqtConnections closes dlqt's connections through the management
// API while its scan is in the middle, however fast the scan runs: dlqt is
// stopped (SIGSTOP) first, so it cannot finish while the API catches up
// with its connections (it lists a connection a moment after it opens, and
// a loaded machine can scan the whole queue in that moment), and continued
// only once the node no longer lists them. The stop (at most 15 s) stays
// well under the heartbeat timeout (dlqt takes the node's 60 s), so it is
// the close, not a missed heartbeat, that ends them.
func closeDlqtConnections(t *testing.T, node *privnode.Node, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGCONT) }()
	dlqts := func() ([]string, bool) {
		conns, err := node.ListConnections()
		if err != nil {
			t.Fatalf("listing the connections: %v", err)
		}
		var names []string
		scanning := false
		for _, c := range conns {
			if strings.HasPrefix(c.ClientName, "dlqt ") {
				names = append(names, c.Name)
				scanning = scanning || c.ClientName == "dlqt full scan"
			}
		}
		return names, scanning
	}
	stopped := time.Now()
	deadline := stopped.Add(15 * time.Second)
	names, scanning := dlqts()
	for ; !scanning; names, scanning = dlqts() {
		if time.Now().After(deadline) {
			t.Fatalf("the management API did not list dlqt's full scan connection in 15 s (dlqt's: %v)", names)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, name := range names {
		if err := node.CloseConnection(name); err != nil {
			t.Fatalf("closing %s: %v", name, err)
		}
		t.Logf("closed connection %s, listed %v after dlqt stopped", name, time.Since(stopped).Round(time.Millisecond))
	}
	for left, _ := dlqts(); len(left) > 0; left, _ = dlqts() {
		if time.Now().After(deadline) {
			t.Fatalf("dlqt's connections %v are still listed after their close", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func fullScanInterrupted(t *testing.T, node *privnode.Node, total int, queueArgs amqp.Table, delay time.Duration, interrupt func(*exec.Cmd)) {
	cfg := node.NewVhost("fullscan-kill")
	ids := parkOrders(t, cfg, queueArgs, total)
	jpath := filepath.Join(t.TempDir(), "journal.db")
	env := append(brokerEnv(t, cfg), "DLQT_JOURNAL="+jpath)
	args := []string{"fullscan", "orders.parking", "--yes", "--window", "256"}

	windows := func() bool { return len(fullScanSteps(jpath, "in-flight")) >= 3 }
	interruptOnceJournaled(t, env, args, "three windows", windows, delay, interrupt)
	assertScanInterrupted(t, jpath, total)
	settled := waitDepthSettles(t, cfg, "orders.parking")
	left := queueIDs(t, cfg)
	extra := len(left) - total
	if missing := missingFrom(ids, distinctSorted(left)); len(missing) > 0 {
		t.Fatalf("%d messages lost by the interrupted scan: %v", len(missing), missing[:min(5, len(missing))])
	}
	t.Logf("after the interruption: %d in the queue (settled at %d), %d extra copies", len(left), settled, extra)

	r := runDlqt(t, env, args...)
	removed := fmt.Sprintf("removed %d extra copies", extra)
	if r.code != 0 || (extra > 0) != strings.Contains(r.stderr, removed) || !strings.Contains(r.stderr, fmt.Sprintf("moved all %d messages", total)) {
		t.Fatalf("the next scan, with %d extra copies: exit %d: %s", extra, r.code, r.stderr)
	}
	after := queueIDs(t, cfg)
	if len(after) != total || len(distinctSorted(after)) != total {
		t.Fatalf("after the next scan the queue holds %d messages, %d distinct; want %d each once", len(after), len(distinctSorted(after)), total)
	}
	outcomes := fullScanSteps(jpath, "outcome")
	if got := outcomes[len(outcomes)-1].Details["removed"]; got != float64(extra) {
		t.Fatalf("the journal says the next scan removed %v, want %d", got, extra)
	}
}

// assertScanInterrupted checks in the journal that the interruption came
// in the middle of the scan: windows were in flight, and no outcome says
// the scan moved every message (a killed dlqt journals none, one whose
// connections closed journals the error with what it had moved).
func assertScanInterrupted(t *testing.T, jpath string, total int) {
	t.Helper()
	var inFlight, outcomes []journal.Entry
	for deadline := time.Now().Add(10 * time.Second); inFlight == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		inFlight, outcomes = fullScanSteps(jpath, "in-flight"), fullScanSteps(jpath, "outcome")
	}
	if len(inFlight) < 3 {
		t.Fatalf("%d windows journaled in flight, want at least 3", len(inFlight))
	}
	for _, o := range outcomes {
		if o.Details["whole"] == true || o.Details["error"] == nil || o.Details["moved"] == float64(total) {
			t.Fatalf("the scan was not interrupted in the middle: its outcome %v", o.Details)
		}
		t.Logf("the interrupted scan's outcome: moved %v of %v: %v", o.Details["moved"], o.Details["total"], o.Details["error"])
	}
	t.Logf("interrupted after %d windows in flight", len(inFlight))
}

// parkOrders parks total persistent messages in orders.parking, declared
// with args; it returns their ids, sorted.
func parkOrders(t *testing.T, cfg broker.Config, args amqp.Table, total int) []string {
	t.Helper()
	ch, err := brokertest.Dial(t, cfg).Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if _, err := ch.QueueDeclare("orders.parking", true, false, false, false, args); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, total)
	var last *amqp.DeferredConfirmation
	for i := range total {
		ids[i] = fmt.Sprintf("m-%05d", i)
		last, err = ch.PublishWithDeferredConfirmWithContext(context.Background(), "", "orders.parking", false, false, amqp.Publishing{
			MessageId: ids[i], DeliveryMode: amqp.Persistent, ContentType: "application/json", Body: []byte(`{"order":1}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !last.Wait() {
		t.Fatal("the broker nacked a parked message")
	}
	return ids
}

// fullScanSteps are the journal's full scan entries of one step, read
// without holding dlqt up (nil while the journal is busy).
func fullScanSteps(path, step string) []journal.Entry {
	return slices.DeleteFunc(entriesNow(path), func(e journal.Entry) bool { return e.Action != triage.ActionFullScan || e.Details["step"] != step })
}

func distinctSorted(ids []string) []string {
	s := slices.Clone(ids)
	slices.Sort(s)
	return slices.Compact(s)
}
