package broker_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// A discard on a classic queue reads the queue again before it journals
// its outcome: the outcome says "discarded (verified)" only when the ids
// are gone. Checked by id at the source.
func TestDiscardOnTheBrokerIsVerifiedByID(t *testing.T) {
	f := newFixture(t, "discard-verify")
	f.declare("orders.parking", nil)
	all := f.publish("orders.parking", 6, 64)
	l := f.live()
	top, err := l.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pick := []string{all[1], all[4]}
	var rec recorded
	res, err := triage.Discard(context.Background(), l, top, &rec, triage.DiscardRequest{
		Vhost: f.cfg.Vhost, Queue: "orders.parking", Reason: "duplicates", Selection: triage.Selection{IDs: pick},
	})
	if err != nil || !slices.Equal(res.Discarded, pick) || !res.Verified || !strings.HasPrefix(res.Verification, triage.VerifiedGone) || len(res.StillThere) != 0 {
		t.Fatalf("result %+v, %v", res, err)
	}
	out := rec[len(rec)-1]
	if out.Details["step"] != "outcome" || out.Details["verification"] != res.Verification || out.Details["verified"] != true {
		t.Errorf("outcome %+v", out)
	}
	f.waitDepth("orders.parking", 4)
	want := slices.DeleteFunc(slices.Clone(all), func(id string) bool { return slices.Contains(pick, id) })
	if got := ids(f.drain("orders.parking")); !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}
}

// Over 1,000 discarded on a classic queue: verified by depth once the acks
// are applied (a consume reaches the queue after them), by id at the source.
func TestALargeDiscardOnTheBrokerIsVerifiedByDepth(t *testing.T) {
	f := newFixture(t, "discard-depth")
	f.declare("orders.parking", nil)
	all := f.publish("orders.parking", 1200, 64)
	l := f.live()
	top, err := l.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pick, keep := all[:1100], all[1100:]
	var rec recorded
	res, err := triage.Discard(context.Background(), l, top, &rec, triage.DiscardRequest{
		Vhost: f.cfg.Vhost, Queue: "orders.parking", Reason: "stale", Selection: triage.Selection{IDs: pick},
	})
	if err != nil || len(res.Discarded) != 1100 || !res.Verified {
		t.Fatalf("%d discarded, verified %v: %s, %v", len(res.Discarded), res.Verified, res.Verification, err)
	}
	f.waitDepth("orders.parking", 100)
	if got := ids(f.drain("orders.parking")); !slices.Equal(got, keep) {
		t.Errorf("left %d ids, want the last 100 in order", len(got))
	}
}
