package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// replaceParked takes the parked message id out of the parking queue and
// parks another message under the same id with body, the way the first
// was parked: what a producer's
// retry, or a second incident, does while a decision waits.
func (b *replayBed) replaceParked(id, body string) {
	b.t.Helper()
	n := b.depth(bedParking)
	ch, err := b.conn.Channel()
	if err != nil {
		b.t.Fatal(err)
	}
	ds, err := ch.Consume(bedParking, "", false, false, false, false, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	for seen := 0; seen < n; seen++ {
		select {
		case d := <-ds:
			if d.MessageId == id {
				if err := d.Ack(false); err != nil {
					b.t.Fatal(err)
				}
			}
		case <-time.After(5 * time.Second):
			b.t.Fatalf("replace %s: read %d of %d", id, seen, n)
		}
	}
	ch.Close() // the others go back
	b.waitDepth(bedParking, n-1)
	err = b.ch.PublishWithContext(context.Background(), "orders", "order.created", true, false, amqp.Publishing{
		MessageId: id, ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: []byte(body)})
	if err != nil {
		b.t.Fatal(err)
	}
	b.waitDepth(bedOrders, 1)
	stop := b.rejectAll(bedOrders)
	b.waitDepth(bedParking, n)
	stop()
}

// holds reports whether the parking queue holds message id with body.
func (b *replayBed) holds(id, body string) bool {
	for _, d := range b.read(bedParking) {
		if d.MessageId == id && string(d.Body) == body {
			return true
		}
	}
	return false
}

// drainOrders waits until the destination's consumer emptied it, stops
// it and returns what arrived.
func (b *replayBed) drainOrders(stop func() []arrival) []arrival {
	deadline := time.Now().Add(5 * time.Second)
	for b.depth(bedOrders) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	return stop()
}

// approvedDiscard is alice's proposal to discard id, approved by carol.
func approvedDiscard(t *testing.T, b *replayBed, p people, id string) string {
	t.Helper()
	prop := proposalOf(t, runDlqt(t, p.as(b.env, "alice"), "discard", bedParking, "--id", id, "--reason", "duplicate of a settled order", "--yes"))
	if res := runDlqt(t, p.as(b.env, "carol"), "approve", prop); res.code != 0 {
		t.Fatalf("approve exited %d: %s", res.code, res.stderr)
	}
	return prop
}

// proposalOf reads the proposal id a gated command printed as text.
func proposalOf(t *testing.T, res result) string {
	t.Helper()
	if res.code != 3 {
		t.Fatalf("a gated action exited %d, want 3\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	return strings.TrimSuffix(strings.Fields(strings.TrimPrefix(res.stdout, "proposal "))[0], ":")
}

// statusOf is the proposal's status as `dlqt proposals --json` lists it.
func statusOf(t *testing.T, env []string, id string) string {
	t.Helper()
	res := runDlqt(t, env, "proposals", id, "--json")
	var rows []proposalOut
	if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("proposals %s --json: %v\n%s%s", id, err, res.stdout, res.stderr)
	}
	return rows[0].Status
}

// TestApprovedDiscardRefusesAChangedMessage: the approval was given on
// message order-00000 as it was (amount 0); a different message parked
// since under the same id (amount 250000) is not discarded, and run says
// which one changed.
func TestApprovedDiscardRefusesAChangedMessage(t *testing.T) {
	b, p := approvalBed(t, "approve-changed", "")
	ids := b.park(2)
	id := approvedDiscard(t, b, p, ids[0])
	newBody := `{"message_id":"order-00000","event_type":"order.created","amount":250000}`
	b.replaceParked(ids[0], newBody)

	res := runDlqt(t, p.as(b.env, "alice"), "run", id, "--yes")
	if res.code == 0 || !strings.Contains(res.stderr, ids[0]) || !strings.Contains(res.stderr, "changed since") {
		t.Errorf("run of a discard whose message changed exited %d, want a refusal naming %s\nstdout:\n%s\nstderr:\n%s", res.code, ids[0], res.stdout, res.stderr)
	}
	if n := b.depth(bedParking); n != 2 || !b.holds(ids[0], newBody) {
		t.Errorf("parking holds %d message(s), the new %s among them: %v; want both, untouched", n, ids[0], b.holds(ids[0], newBody))
	}
}

// TestRunWithTheBrokerDownKeepsTheApproval: a run that never reached the
// broker did nothing, so the proposal stays approved and a later run
// carries it out.
func TestRunWithTheBrokerDownKeepsTheApproval(t *testing.T) {
	b, p := approvalBed(t, "approve-down", "")
	ids := b.park(2)
	id := approvedDiscard(t, b, p, ids[0])
	down := append(p.as(b.env, "alice"), "DLQT_AMQP_URL=amqp://guest:guest@127.0.0.1:1/", "DLQT_MGMT_URL=http://127.0.0.1:1")
	if res := runDlqt(t, down, "run", id, "--yes"); res.code == 0 {
		t.Fatalf("a run with the broker down exited 0:\n%s%s", res.stdout, res.stderr)
	}
	if got := statusOf(t, b.env, id); got != "approved" {
		t.Fatalf("after a run that never reached the broker the proposal is %q, want approved", got)
	}
	if res := runDlqt(t, p.as(b.env, "alice"), "run", id, "--yes"); res.code != 0 {
		t.Fatalf("the run once the broker is back exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if got := statusOf(t, b.env, id); got != "run" {
		t.Errorf("after the run the proposal is %q, want run", got)
	}
	if left := messageIDs(b.read(bedParking)); len(left) != 1 || left[0] != ids[1] {
		t.Errorf("parking holds %v, want only %s", left, ids[1])
	}
}

// TestApprovedReplayRefusesAChangedMessage: the same for a replay: the
// approved ids go, except the one parked again with another body, which
// stays and is named.
func TestApprovedReplayRefusesAChangedMessage(t *testing.T) {
	b, p := approvalBed(t, "approve-changed-replay", "")
	ids := b.park(2)
	res := runDlqt(t, p.as(b.env, "alice"), "replay", bedParking, "--id", ids[0], "--id", ids[1], "--canary", "1", "--observe", "500ms", "--yes", "--json")
	var prop proposalOut
	if err := json.Unmarshal([]byte(res.stdout), &prop); err != nil || res.code != 3 {
		t.Fatalf("a gated replay exited %d: %v\n%s%s", res.code, err, res.stdout, res.stderr)
	}
	id := prop.Proposal
	if res := runDlqt(t, p.as(b.env, "carol"), "approve", id); res.code != 0 {
		t.Fatalf("approve exited %d: %s", res.code, res.stderr)
	}
	newBody := `{"message_id":"order-00001","event_type":"order.created","amount":250000}`
	b.replaceParked(ids[1], newBody)

	stop := b.consume(bedOrders)
	res = runDlqt(t, p.as(b.env, "alice"), "run", id, "--yes")
	got := b.drainOrders(stop)
	if res.code == 0 || !strings.Contains(res.stderr, "changed since the decision") || !strings.Contains(res.stdout, ids[1]+" changed since the proposal named it") {
		t.Errorf("run of a replay whose message changed exited %d, want a refusal naming %s\nstdout:\n%s\nstderr:\n%s", res.code, ids[1], res.stdout, res.stderr)
	}
	if len(got) != 1 || got[0].d.MessageId != ids[0] {
		t.Errorf("the destination received %d message(s), want only %s", len(got), ids[0])
	}
	if n := b.depth(bedParking); n != 1 || !b.holds(ids[1], newBody) {
		t.Errorf("parking holds %d message(s), want only the new %s", n, ids[1])
	}
}
