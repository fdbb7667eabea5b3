package replay

import (
	"slices"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// A kill -9 of dlqt right after a publish left, before its confirm was
// journalled: the journal as it stood at that instant is what a resume
// reads. The ids of each batch are journalled before it is sent, so the
// resume can name the copies that may already be at the destination.

// journalAtPublishOf returns the records written before item id's publish
// was sent, as a kill at that instant leaves them.
func journalAtPublishOf(port *fakePort, spy *journalSpy, id string) func() []triage.Record {
	var at []triage.Record
	port.beforePublish = func(item string) {
		if item != id || at != nil {
			return
		}
		spy.mu.Lock()
		at = slices.Clone(spy.records)
		spy.mu.Unlock()
	}
	return func() []triage.Record { return at }
}

func TestAKillAfterAPublishNamesItOnResume(t *testing.T) {
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b", "c", "d")
	port := newFakePort()
	spy := &journalSpy{}
	killedAt := journalAtPublishOf(port, spy, "c")
	first := driveWith(t, t.Context(), spy, plan, port, nil, nil)
	if first.err != nil {
		t.Fatal(first.err)
	}
	records := killedAt()
	if records == nil {
		t.Fatal("c was never published")
	}
	var named bool
	for _, r := range records {
		named = named || (r.Action == triage.ActionReplayOutcome && slices.Contains(r.MessageIDs, "c"))
	}
	if !named {
		t.Fatalf("c was sent with no journal entry naming it: a kill now leaves no trace of it (journal %v)", actionsOf(records))
	}

	st, err := Find(journalOf(t, &journalSpy{records: records}), plan.ID)
	if err != nil || !st.Interrupted() {
		t.Fatalf("state %+v, %v", st, err)
	}
	again := st.ResumePlan()
	port2 := newFakePort()
	second := drive(t, again, port2, nil, nil)
	published, _, _ := port2.snapshot()
	if second.err != nil || !slices.Contains(published, "c") {
		t.Fatalf("resume: %+v, %v; published %v", second.res, second.err, published)
	}
	if !slices.Contains(second.res.Republished, "c") || slices.Contains(second.res.Republished, "d") {
		t.Errorf("resume names %v as may-be-twice: want c (published before the kill), not d (never sent)", second.res.Republished)
	}
	var journalled bool
	for _, r := range second.spy.records {
		journalled = journalled || (r.Details["may_be_delivered_twice"] == true && slices.Contains(r.MessageIDs, "c"))
	}
	if !journalled {
		t.Errorf("the resume's journal does not say c may be delivered twice: %v", second.spy.actions())
	}
}

func actionsOf(rs []triage.Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r.Action)+":"+r.Reason)
	}
	return out
}
