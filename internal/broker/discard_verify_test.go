package broker_test

import (
	"context"
	"slices"
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
	if err != nil || !slices.Equal(res.Discarded, pick) || !res.Verified || res.Verification != triage.VerifiedGone || len(res.StillThere) != 0 {
		t.Fatalf("result %+v, %v", res, err)
	}
	out := rec[len(rec)-1]
	if out.Details["step"] != "outcome" || out.Details["verification"] != triage.VerifiedGone || out.Details["verified"] != true {
		t.Errorf("outcome %+v", out)
	}
	f.waitDepth("orders.parking", 4)
	want := slices.DeleteFunc(slices.Clone(all), func(id string) bool { return slices.Contains(pick, id) })
	if got := ids(f.drain("orders.parking")); !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}
}
