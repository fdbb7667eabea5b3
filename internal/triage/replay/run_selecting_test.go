package replay

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// selectPort is a streamPort whose hold selects as it reads
// (HoldSelector): its script stands for what the selection took.
type selectPort struct {
	*streamPort
	chose Chooser // what the run asked it to select with
}

func (p *selectPort) HoldSelecting(ctx context.Context, queue string, choose Chooser, replayID string) (<-chan HeldBatch, error) {
	p.chose = choose
	return p.streamPort.HoldStream(ctx, queue, nil, replayID)
}

var workRoute = triage.Route{Exchange: "", RoutingKey: "orders.work"}

// selectingPlan is a plan of orders.parking's group published, to
// orders.work, that selects as it holds.
func selectingPlan(t *testing.T, opts Options) Plan {
	t.Helper()
	opts.To, opts.Allow = &workRoute, []string{":orders.*"}
	top := triage.Topology{Vhost: "v", Queues: []triage.Queue{{Name: "orders.parking", Type: triage.QueueClassic}, {Name: "orders.work", Type: triage.QueueClassic}}}
	key, err := triage.ParseGroupKey("published")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewSelectingPlan("v", "orders.parking", triage.Selection{Group: &key}, opts, top)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Runnable(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestASelectingReplayMakesAnItemOfEachMessageItsHoldTakes(t *testing.T) {
	port := &selectPort{streamPort: newStreamPort(
		streamStep{batch: held("a", "b")},
		streamStep{wait: func(p *streamPort) bool { return p.hasPublished("a") }, batch: held("c")},
	)}
	plan := selectingPlan(t, Options{Rate: 100, Canary: 2, CanaryRate: 10, Observe: time.Second, AutoRamp: true})
	r := drive(t, plan, port, nil, nil)
	if r.err != nil || r.res.StoppedBecause != "" {
		t.Fatalf("result %+v, %v", r.res, r.err)
	}
	if port.chose == nil {
		t.Error("the hold was given no selection")
	}
	if r.res.Items() != 3 || r.res.Resolved != 3 || r.res.Untouched != 0 {
		t.Errorf("items %d, resolved %d, untouched %d: want the 3 the hold took, resolved", r.res.Items(), r.res.Resolved, r.res.Untouched)
	}
	if got := outcomes(r.res, "a", "b", "c", "x"); !slices.Equal(got, []Outcome{OutcomeResolved, OutcomeResolved, OutcomeResolved, ""}) {
		t.Errorf("outcomes %v", got)
	}
	if r.res.PacedPublished != 1 {
		t.Errorf("paced %d, want 1 (c): a canary of 2 before the hold said how many it takes", r.res.PacedPublished)
	}
	published, acked, _ := port.snapshot()
	if !slices.Equal(published, []string{"a", "b", "c"}) || len(acked) != 3 {
		t.Errorf("published %v, acked %v", published, acked)
	}
	// Each is journalled before it is sent: the plan entry names none.
	var sentAt, planAt = map[string]int{}, -1
	for i, rec := range r.spy.records {
		switch {
		case rec.Action == triage.ActionReplayPlan:
			planAt = i
			if len(rec.MessageIDs) != 0 {
				t.Errorf("the plan entry names %v before anything was held", rec.MessageIDs)
			}
		case rec.Action == triage.ActionReplayOutcome && rec.Reason == string(OutcomePublished):
			for _, id := range rec.MessageIDs {
				if _, ok := sentAt[id]; !ok {
					sentAt[id] = i
				}
			}
		}
	}
	if planAt < 0 || len(sentAt) != 3 {
		t.Errorf("plan entry at %d, published entries for %v: want the plan, then each of a, b, c", planAt, sentAt)
	}
}

func TestASelectingReplayThatHoldsNothingReplaysNothing(t *testing.T) {
	port := &selectPort{streamPort: newStreamPort(streamStep{batch: HeldBatch{}})}
	plan := selectingPlan(t, Options{Rate: 100, Canary: 2, CanaryRate: 10, Observe: time.Second, AutoRamp: true})
	r := drive(t, plan, port, nil, nil)
	if r.err != nil || r.res.Items() != 0 || r.res.Published != 0 {
		t.Fatalf("result %+v (items %d), %v", r.res, r.res.Items(), r.err)
	}
}

func TestASelectingReplayNeedsAPortThatSelects(t *testing.T) {
	port := newStreamPort(streamStep{batch: held("a")}) // streams named ids only
	plan := selectingPlan(t, Options{Rate: 100, Canary: 1, CanaryRate: 10, Observe: time.Second, AutoRamp: true})
	r := drive(t, plan, port, nil, nil)
	if r.err == nil || !strings.Contains(r.err.Error(), "cannot") {
		t.Fatalf("want a refusal, got %+v, %v", r.res, r.err)
	}
	if published, _, _ := port.snapshot(); len(published) != 0 {
		t.Errorf("published %v", published)
	}
}

func TestAKilledSelectingReplayResumesWithWhatItHadTaken(t *testing.T) {
	// Killed as its canary (a) went out: b was held too, c not yet read.
	port := &selectPort{streamPort: newStreamPort(
		streamStep{batch: held("a", "b")},
		streamStep{wait: func(p *streamPort) bool { return p.hasPublished("a") }, batch: held("c")},
	)}
	spy := &journalSpy{}
	killedAt := journalAtPublishOf(port.fakePort, spy, "a")
	plan := selectingPlan(t, Options{Rate: 100, Canary: 1, CanaryRate: 10, Observe: time.Second, AutoRamp: true})
	if first := driveWith(t, t.Context(), spy, plan, port, nil, nil); first.err != nil {
		t.Fatal(first.err)
	}
	records := killedAt()
	st, err := Find(journalOf(t, &journalSpy{records: records}), plan.ID)
	if err != nil || !st.Interrupted() {
		t.Fatalf("state %+v, %v", st, err)
	}
	again := st.ResumePlan()
	if again.Selecting || !slices.Equal(again.IDs(), []string{"a"}) {
		t.Fatalf("the resume's plan: selecting %v, ids %v; want a alone (journalled before the kill) and no more selecting", again.Selecting, again.IDs())
	}
	if it := again.Items.At(0); it.Route != workRoute {
		t.Errorf("a resumes to %s, want %s", it.Route, workRoute)
	}
	port2 := newFakePort()
	second := drive(t, again, port2, nil, nil)
	published, _, _ := port2.snapshot()
	if second.err != nil || !slices.Equal(published, []string{"a"}) || !slices.Equal(second.res.Republished, []string{"a"}) {
		t.Errorf("resume: %+v, %v; published %v (b and c were never sent: they stay for a new replay)", second.res, second.err, published)
	}
}

func TestALedgerFindsItemsAddedAsTheRunGoes(t *testing.T) {
	l := newLedger(ItemsOf(Item{ID: "m"}, Item{ID: "c"}))
	var ids []string
	for i := range 5000 {
		id := "id-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "-" + time.Duration(i).String()
		ids = append(ids, id)
		l.add(Item{ID: id, Route: workRoute})
		if _, ok := l.index(id); !ok {
			t.Fatalf("%s not found right after it was added", id)
		}
	}
	l.settle("c", OutcomeReturned)
	l.sortLater()
	for k, id := range append([]string{"m", "c"}, ids...) {
		i, ok := l.index(id)
		if !ok || l.items.ID(int(i)) != id || int(i) != k {
			t.Fatalf("%s at %d (%v), want %d", id, i, ok, k)
		}
	}
	if !l.is("c", OutcomeReturned) || l.has(ids[0], flagHeld) {
		t.Error("an outcome or flag moved with the sort")
	}
	if _, ok := l.index("nope"); ok {
		t.Error("found an id never added")
	}
}
