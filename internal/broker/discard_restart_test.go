package broker_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
	"github.com/dlqt/dlqt/internal/triage"
)

// A classic queue applies a channel's acks after its close-ok (measured:
// 11,111 acks at 300-400/s, and a restart in that window brought 8,191
// "discarded" messages back). So a discard the journal calls verified must
// stay discarded when the node restarts the moment the discard returns:
// checked by id on a private node, durable queue, persistent messages.
func TestADiscardVerifiedBeforeARestartStaysDiscarded(t *testing.T) {
	n := privnode.Start(t)
	discardThen(t, n, "restart", n.RestartFull)
}

// The node is killed with SIGKILL the moment a discard says "verified":
// the broker writes acks to disk on its own schedule, and a kill before
// that brought 5,000 of 5,000 back (issue 23 item 8). A verified discard
// waits out that window and reads the depth again; its outcome says what a
// crash could still undo.
func TestADiscardVerifiedBeforeAKillStaysDiscarded(t *testing.T) {
	n := privnode.Start(t)
	res := discardThen(t, n, "kill", n.KillAndBoot)
	if res.Verified && !strings.Contains(res.Verification, "crash") {
		t.Errorf("the outcome does not say what a crash could undo: %s", res.Verification)
	}
}

// discardThen discards 5,000 of 6,000 messages, then crashes the node as
// asked: nothing not chosen may be lost, and nothing a verified discard
// took may come back.
func discardThen(t *testing.T, n *privnode.Node, what string, crash func()) triage.DiscardResult {
	f := fixtureOn(t, n.NewVhost("discard-"+what))
	f.declare("orders.parking", nil)
	all := f.publish("orders.parking", 6000, 64)
	l := f.live()
	top, err := l.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pick, keep := all[:5000], all[5000:]
	var rec recorded
	res, err := triage.Discard(context.Background(), l, top, &rec, triage.DiscardRequest{
		Vhost: f.cfg.Vhost, Queue: "orders.parking", Reason: "stale", Selection: triage.Selection{IDs: pick},
	})
	if err != nil || len(res.Discarded) != len(pick) {
		t.Fatalf("%d discarded: %v", len(res.Discarded), err)
	}
	t.Logf("discard returned: verified %v (%s)", res.Verified, res.Verification)
	crash()

	g := fixtureOn(t, f.cfg)
	left := ids(g.drain("orders.parking"))
	var back, lost []string
	for _, id := range pick {
		if slices.Contains(left, id) {
			back = append(back, id)
		}
	}
	for _, id := range keep {
		if !slices.Contains(left, id) {
			lost = append(lost, id)
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d messages not chosen were lost across the %s: %v", len(lost), what, lost[:min(len(lost), 10)])
	}
	if res.Verified && len(back) > 0 {
		t.Errorf("the discard was journaled as verified, yet %d discarded messages came back after the %s: %v",
			len(back), what, back[:min(len(back), 10)])
	}
	t.Logf("%d of %d discarded came back after the %s (verified %v)", len(back), len(pick), what, res.Verified)
	return res
}
