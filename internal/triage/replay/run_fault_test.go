package replay

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// Faults a replay meets on a real broker, driven through the fake port on
// the fake clock: a lost connection, a journal that stops taking entries,
// SIGINT, returns and collateral dead letters.

// journalOf turns what a run wrote into a journal to read the replay's
// state back from, as a resume does.
func journalOf(t *testing.T, spy *journalSpy) *memJournal {
	t.Helper()
	j := &memJournal{}
	for _, r := range spy.records {
		j.write(t, r.Action, r.Reason, r.MessageIDs, r.Details)
	}
	return j
}

func lastRecord(spy *journalSpy) triage.Record {
	spy.mu.Lock()
	defer spy.mu.Unlock()
	return spy.records[len(spy.records)-1]
}

// A connection loss after a copy was confirmed: the ack of its source
// fails. The replay must not journal a finish (that made --resume refuse);
// it stays resumable, and the resume acks that source instead of
// publishing it again.
func TestAnAckLostWithTheConnectionLeavesTheReplayResumable(t *testing.T) {
	port := newFakePort()
	port.ackErr = errors.New("Exception (504) Reason: \"channel/connection is not open\"")
	port.onPublish = []Signal{{Kind: SignalLost, Reason: "hold channel closed by the broker"}}
	port.closeSignals = true
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b", "c")
	r := drive(t, plan, port, nil, nil)
	if r.err != nil || r.res.StoppedBecause == "" || !r.res.Resumable {
		t.Fatalf("result %+v, %v: want a resumable stop", r.res, r.err)
	}
	if r.res.Outcome("a") != OutcomeConfirmed || !slices.Equal(r.res.Unacked, []string{"a"}) || r.res.Confirmed != 1 || r.res.Resolved != 0 {
		t.Errorf("a was confirmed and never acked: outcome %s, unacked %v, result %+v", r.res.Outcome("a"), r.res.Unacked, r.res)
	}
	if got := r.spy.actions(); slices.Contains(got, "replay-finish") || got[len(got)-1] != "replay-stop" {
		t.Fatalf("journal %v: a replay with unacked sources must end with a stop, not a finish", got)
	}
	if d := lastRecord(r.spy).Details; d["resumable"] != true || !slices.Equal(d["unacked"].([]string), []string{"a"}) {
		t.Errorf("stop details %v", d)
	}

	st, err := Find(journalOf(t, r.spy), plan.ID)
	if err != nil || !st.Interrupted() {
		t.Fatalf("state %+v, %v: --resume would refuse", st, err)
	}
	again := st.ResumePlan()
	if !slices.Equal(again.Prior.Confirmed, []string{"a"}) {
		t.Fatalf("prior %+v", again.Prior)
	}
	port2 := newFakePort()
	r2 := drive(t, again, port2, nil, nil)
	published, acked, _ := port2.snapshot()
	if r2.err != nil || r2.res.Resolved != 3 || slices.Contains(published, "a") || !slices.Contains(acked, "a") {
		t.Errorf("resume: %+v, %v; published %v acked %v", r2.res, r2.err, published, acked)
	}
	if !slices.Contains(r2.spy.actions(), "replay-finish") {
		t.Errorf("the resume did not finish: %v", r2.spy.actions())
	}
}

// On resume, a confirmed source that is no longer in the queue is not
// published again, and the journal says it is gone.
func TestAResumeSaysWhenAConfirmedSourceIsGone(t *testing.T) {
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b")
	plan.Prior = &Prior{Confirmed: []string{"a"}, Settled: map[string]Outcome{}, CanaryPassed: true}
	port := newFakePort()
	port.gone = map[string]bool{"a": true}
	r := drive(t, plan, port, nil, nil)
	published, acked, _ := port.snapshot()
	if r.err != nil || r.res.Outcome("a") != OutcomeResolved || slices.Contains(published, "a") || slices.Contains(acked, "a") {
		t.Fatalf("result %+v, %v; published %v acked %v", r.res, r.err, published, acked)
	}
	if !strings.Contains(r.res.Why["a"], "no longer in the queue") || !slices.Equal(r.res.Gone, []string{"a"}) {
		t.Errorf("why a: %q", r.res.Why["a"])
	}
}

// The journal stops taking entries while copies are in flight: the run
// waits for their confirms (on its clock, bounded by the confirm timeout)
// and reports each as the broker answered; none is "not published".
func TestAJournalFailureWaitsForTheConfirmsInFlight(t *testing.T) {
	clock := newFakeClock()
	port := newFakePort()
	port.clock = clock
	for _, id := range []string{"b", "c", "d", "e"} {
		port.delay[id] = 3 * time.Second
	}
	port.answers["c"] = &PublishResult{Why: "nack"}
	port.answers["d"] = nil // never answered
	spy := &journalSpy{failFrom: map[triage.Action]bool{triage.ActionReplayPause: true}}
	ctl := make(chan Command, 1)
	paused := false
	pauseWhenAllFly := func(p Progress) {
		if p.InFlight == 4 && !paused {
			paused = true
			ctl <- Pause
		}
	}
	plan := fakePlan(Options{Rate: 100, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true, ConfirmTimeout: 10 * time.Second}, "a", "b", "c", "d", "e")
	r := driveWith(t, context.Background(), spy, plan, port, ctl, pauseWhenAllFly)
	if r.err == nil || !strings.Contains(r.err.Error(), "no space left") {
		t.Fatalf("err %v: the journal's failure must be said", r.err)
	}
	want := map[string]Outcome{"a": OutcomeResolved, "b": OutcomeConfirmed, "c": OutcomeReturned, "d": OutcomeReturned, "e": OutcomeConfirmed}
	for id, o := range want {
		if r.res.Outcome(id) != o {
			t.Errorf("%s: %s (%s), want %s", id, r.res.Outcome(id), r.res.Why[id], o)
		}
	}
	if !slices.Equal(r.res.Unconfirmed, []string{"d"}) || !strings.Contains(r.res.Why["d"], "may be delivered twice") || r.res.Why["c"] != "nack" {
		t.Errorf("unconfirmed %v, why %v", r.res.Unconfirmed, r.res.Why)
	}
	// The confirmed copies could not be journalled, so their sources were
	// not acked: they stay parked and are reported.
	if !slices.Equal(r.res.Unacked, []string{"b", "e"}) {
		t.Errorf("unacked %v", r.res.Unacked)
	}
	_, acked, requeued := port.snapshot()
	slices.Sort(requeued)
	if !slices.Equal(acked, []string{"a"}) || !slices.Equal(requeued, []string{"b", "c", "d", "e"}) {
		t.Errorf("acked %v requeued %v", acked, requeued)
	}
	if r.elapsed < 3*time.Second {
		t.Errorf("wrapped up after %v of the run's clock: the confirms in flight were not waited for", r.elapsed)
	}
}

// An auto-ramp the journal refuses stops the run before anything more is
// published: a replay never acts unrecorded.
func TestARefusedRampEntryStopsTheRun(t *testing.T) {
	port := newFakePort()
	spy := &journalSpy{failFrom: map[triage.Action]bool{triage.ActionReplayRamp: true}}
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b", "c")
	r := driveWith(t, context.Background(), spy, plan, port, nil, nil)
	published, _, requeued := port.snapshot()
	if r.err == nil || !slices.Equal(published, []string{"a"}) || !slices.Equal(requeued, []string{"b", "c"}) {
		t.Errorf("err %v, published %v, requeued %v", r.err, published, requeued)
	}
}

// SIGINT cancels the run's context: it publishes nothing more, still reads
// the confirms in flight, and journals the interruption and the end.
func TestSIGINTWithPublishesInFlight(t *testing.T) {
	clock := newFakeClock()
	port := newFakePort()
	port.clock = clock
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		port.delay[id] = 2 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupt := func(p Progress) {
		if p.InFlight > 0 && p.Published >= 2 {
			cancel()
		}
	}
	plan := fakePlan(Options{Rate: 2, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b", "c", "d")
	plan.Items.Append(Item{ID: "e", Route: plan.Items.At(0).Route})
	r := driveWith(t, ctx, &journalSpy{}, plan, port, nil, interrupt)
	if r.err != nil || !r.res.Aborted {
		t.Fatalf("result %+v, %v", r.res, r.err)
	}
	published, acked, _ := port.snapshot()
	for _, id := range published {
		if r.res.Outcome(id) != OutcomeResolved || !slices.Contains(acked, id) {
			t.Errorf("%s published and then %s (acked %v)", id, r.res.Outcome(id), acked)
		}
	}
	if r.res.Resolved+r.res.Untouched != 5 || r.res.Untouched == 0 {
		t.Errorf("result %+v", r.res)
	}
	got := strings.Join(r.spy.actions(), " ")
	if !strings.Contains(got, "replay-abort") || !strings.HasSuffix(got, "replay-finish") {
		t.Errorf("journal %s", got)
	}
}

// A mandatory return keeps its source parked and stops the run.
func TestAReturnKeepsTheSourceAndStops(t *testing.T) {
	port := newFakePort()
	port.answers["a"] = &PublishResult{Why: "returned by the broker: 312 NO_ROUTE"}
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b")
	r := drive(t, plan, port, nil, nil)
	_, acked, requeued := port.snapshot()
	if r.err != nil || r.res.Outcome("a") != OutcomeReturned || len(acked) != 0 || !slices.Equal(requeued, []string{"a", "b"}) ||
		!strings.Contains(r.res.StoppedBecause, "312 NO_ROUTE") {
		t.Errorf("result %+v, %v; acked %v requeued %v", r.res, r.err, acked, requeued)
	}
}

// A message that is not replayed but dead-lettered from a destination
// queue during the replay (a full bounded queue dropping its head) is
// collateral: the canary does not pass, and the journal names it.
func TestCollateralDeadLettersStopTheCanary(t *testing.T) {
	port := newFakePort()
	port.onPublish = []Signal{
		{Kind: SignalDeadLetter, ID: "older-1", Queue: "orders"},
		{Kind: SignalDeadLetter, ID: "unrelated", Queue: "payments"}, // not a destination
		{Kind: SignalDeadLetter, ID: "b", Queue: "orders"},           // a replayed id: not collateral
	}
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b", "c")
	plan.DestinationQueues = []string{"orders"}
	r := drive(t, plan, port, nil, nil)
	if r.err != nil || !strings.Contains(r.res.StoppedBecause, "not replayed were dead-lettered from destination orders") ||
		!slices.Equal(r.res.Collateral, []string{"older-1"}) {
		t.Fatalf("result %+v, %v", r.res, r.err)
	}
	if published, _, _ := port.snapshot(); !slices.Equal(published, []string{"a"}) {
		t.Errorf("published %v after collateral damage", published)
	}
	st, err := Find(journalOf(t, r.spy), plan.ID)
	if err != nil || !slices.Equal(st.Collateral, []string{"older-1"}) {
		t.Errorf("state %+v, %v", st.Collateral, err)
	}
}

// A depth poll that fails makes the depth unknown and says why.
func TestAFailedDepthPollIsShown(t *testing.T) {
	port := newFakePort()
	port.depthErr = errors.New("NOT_FOUND - no queue 'orders'")
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a")
	plan.DestinationQueues = []string{"orders"}
	var seen string
	r := drive(t, plan, port, nil, func(p Progress) {
		if p.DepthError != "" && p.DestinationDepth == -1 {
			seen = p.DepthError
		}
	})
	if r.err != nil || !strings.Contains(seen, "no queue 'orders'") {
		t.Errorf("depth error shown %q, %v", seen, r.err)
	}
}

// The connection drops while copies are in flight: the broker's answers
// still come in (a confirm, a nack from the dying channel, none at all),
// the acks fail, and the replay stops resumable with each message said as
// it stands.
func TestAConnectionLossWithPublishesInFlight(t *testing.T) {
	clock := newFakeClock()
	port := newFakePort()
	port.clock = clock
	for _, id := range []string{"b", "c", "d"} {
		port.delay[id] = time.Second
	}
	port.answers["c"] = &PublishResult{Why: "nacked by the broker (or its channel closed)"}
	port.answers["d"] = nil
	lost := false
	dropWhenThreeFly := func(p Progress) {
		if p.InFlight >= 3 && !lost {
			lost = true
			port.mu.Lock()
			port.ackErr = errors.New("channel/connection is not open")
			port.mu.Unlock()
			port.signals <- Signal{Kind: SignalLost, Reason: "hold connection closed by the broker"}
		}
	}
	plan := fakePlan(Options{Rate: 20, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true, ConfirmTimeout: 5 * time.Second}, "a", "b", "c", "d")
	plan.Items.Append(Item{ID: "e", Route: plan.Items.At(0).Route})
	ctl := make(chan Command)
	r := driveWith(t, context.Background(), &journalSpy{}, plan, port, ctl, dropWhenThreeFly)
	if r.err != nil || !strings.Contains(r.res.StoppedBecause, "lost the broker connection") || !r.res.Resumable {
		t.Fatalf("result %+v, %v", r.res, r.err)
	}
	// e's confirm queues behind d's, which never comes: it is read after
	// d's timeout, confirmed, and its ack fails like b's.
	want := map[string]Outcome{"a": OutcomeResolved, "b": OutcomeConfirmed, "c": OutcomeReturned, "d": OutcomeReturned, "e": OutcomeConfirmed}
	for id, o := range want {
		if r.res.Outcome(id) != o {
			t.Errorf("%s: %s (%s), want %s", id, r.res.Outcome(id), r.res.Why[id], o)
		}
	}
	if !slices.Equal(r.res.Unacked, []string{"b", "e"}) || !slices.Equal(r.res.Unconfirmed, []string{"d"}) {
		t.Errorf("unacked %v unconfirmed %v", r.res.Unacked, r.res.Unconfirmed)
	}
	st, err := Find(journalOf(t, r.spy), plan.ID)
	if err != nil || !st.Interrupted() || st.Outcomes["b"] != OutcomeConfirmed || st.Outcomes["a"] != OutcomeResolved {
		t.Errorf("state %+v, %v", st, err)
	}
}

// A resume whose acks fail again (the connection dropped once more) stays
// resumable instead of ending as "failed to start".
func TestAResumeWhoseAcksFailStaysResumable(t *testing.T) {
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b")
	plan.Prior = &Prior{Confirmed: []string{"a"}, Settled: map[string]Outcome{}, CanaryPassed: true}
	port := newFakePort()
	port.ackErr = errors.New("channel/connection is not open")
	r := drive(t, plan, port, nil, nil)
	if r.err == nil || !r.res.Resumable || !slices.Equal(r.res.Unacked, []string{"a"}) {
		t.Fatalf("result %+v, %v", r.res, r.err)
	}
	if got := r.spy.actions(); slices.Contains(got, "replay-finish") {
		t.Errorf("journal %v: the resume ended the replay", got)
	}
	st, err := Find(journalOf(t, r.spy), plan.ID)
	if err != nil || r.res.Outcome("a") != OutcomeConfirmed || st.Outcomes["a"] == OutcomeUntouched {
		t.Errorf("a: result %s, journal %s (%v): it must stay confirmed for the next resume", r.res.Outcome("a"), st.Outcomes["a"], err)
	}
	if published, _, _ := port.snapshot(); len(published) != 0 {
		t.Errorf("published %v", published)
	}
}

// A node killed before it applied the acks of resolved sources puts them
// back in the queue while the journal says resolved: the resume finds them
// there and acks them again (their copies were confirmed), never publishes
// them again, and the journal says so. A resolved source that is gone is
// left alone.
func TestAResumeAcksAgainAResolvedSourceThatIsBack(t *testing.T) {
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b", "c")
	plan.Prior = &Prior{Settled: map[string]Outcome{"a": OutcomeResolved, "b": OutcomeResolved}, CanaryPassed: true}
	port := newFakePort()
	port.gone = map[string]bool{"b": true}
	r := drive(t, plan, port, nil, nil)
	published, acked, _ := port.snapshot()
	if r.err != nil || !slices.Equal(r.res.AckedAgain, []string{"a"}) || !slices.Equal(published, []string{"c"}) || !slices.Equal(acked, []string{"a", "c"}) {
		t.Fatalf("result %+v, %v; published %v, acked %v", r.res, r.err, published, acked)
	}
	if r.res.Resolved != 3 || !strings.Contains(r.res.Why["a"], "never applied its ack") {
		t.Errorf("resolved %d, why %q", r.res.Resolved, r.res.Why["a"])
	}
	var again []string
	for _, rec := range r.spy.records {
		if rec.Details["acked_again"] == true {
			again = append(again, rec.MessageIDs...)
		}
	}
	if !slices.Equal(again, []string{"a"}) {
		t.Errorf("journalled as acked again: %v", again)
	}

	// The ack fails again: the replay stays resumable.
	port = newFakePort()
	port.ackErr = errors.New("channel/connection is not open")
	r = drive(t, plan, port, nil, nil)
	if r.err == nil || !r.res.Resumable || slices.Contains(r.spy.actions(), "replay-finish") {
		t.Errorf("result %+v, %v; journal %v", r.res, r.err, r.spy.actions())
	}
}

// The operator aborts while copies are in flight: nothing more is
// published, the confirms in flight are still read (a confirmed copy's
// source acked, a nacked one's put back), the rest is put back untouched,
// and the journal ends with the abort and an "aborted" finish.
func TestAnAbortWithPublishesInFlight(t *testing.T) {
	clock := newFakeClock()
	port := newFakePort()
	port.clock = clock
	ids := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for _, id := range ids[1:] {
		port.delay[id] = time.Second
	}
	port.answers["c"] = &PublishResult{Why: "nacked by the broker"}
	ctl := make(chan Command, 1)
	var atAbort []string
	abortWhenThreeFly := func(p Progress) {
		if p.InFlight >= 3 && atAbort == nil {
			atAbort, _, _ = port.snapshot()
			ctl <- Abort
		}
	}
	plan := fakePlan(Options{Rate: 20, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, ids...)
	r := driveWith(t, context.Background(), &journalSpy{}, plan, port, ctl, abortWhenThreeFly)
	if r.err != nil || !r.res.Aborted || len(atAbort) < 4 || len(atAbort) == len(ids) {
		t.Fatalf("result %+v, %v; published %v when it aborted", r.res, r.err, atAbort)
	}
	// The abort is taken in its turn: a token already due may go first.
	published, acked, requeued := port.snapshot()
	var abortAt any
	for _, rec := range r.spy.records {
		if rec.Action == triage.ActionReplayAbort {
			abortAt = rec.Details["published"]
		}
	}
	if abortAt != len(published) || len(published) > len(atAbort)+1 {
		t.Errorf("published %v; %v when the abort was journalled, %v when it was asked", published, abortAt, atAbort)
	}
	var wantAcked, wantRequeued []string
	for _, id := range ids {
		want := OutcomeUntouched
		switch {
		case id == "c":
			want = OutcomeReturned
		case slices.Contains(published, id):
			want = OutcomeResolved
		}
		if r.res.Outcome(id) != want {
			t.Errorf("%s: %s, want %s", id, r.res.Outcome(id), want)
		}
		if want == OutcomeResolved {
			wantAcked = append(wantAcked, id)
		} else {
			wantRequeued = append(wantRequeued, id)
		}
	}
	slices.Sort(acked)
	slices.Sort(requeued)
	if !slices.Equal(acked, wantAcked) || !slices.Equal(requeued, wantRequeued) {
		t.Errorf("acked %v, requeued %v; want %v and %v", acked, requeued, wantAcked, wantRequeued)
	}
	got := strings.Join(r.spy.actions(), " ")
	if !strings.Contains(got, "replay-abort") || !strings.HasSuffix(got, "replay-finish") || lastRecord(r.spy).Reason != "aborted" {
		t.Errorf("journal %s, last %+v", got, lastRecord(r.spy))
	}
}

// A publish the client cannot send (its connection reset under it) never
// reached the broker: its source is put back untouched, not "returned by
// the broker", and the run stops saying why.
func TestAPublishThatCannotBeSentLeavesItsSourceUntouched(t *testing.T) {
	port := newFakePort()
	port.publishErr = map[string]error{"b": errors.New("write tcp 127.0.0.1:34888->127.0.0.1:5720: write: connection reset by peer")}
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b", "c")
	r := drive(t, plan, port, nil, nil)
	if r.err != nil || !strings.Contains(r.res.StoppedBecause, "publishing failed, the copy was not sent: write tcp") {
		t.Fatalf("result %+v, %v", r.res, r.err)
	}
	if o := outcomes(r.res, "a", "b", "c"); !slices.Equal(o, []Outcome{OutcomeResolved, OutcomeUntouched, OutcomeUntouched}) || r.res.Returned != 0 || r.res.Published != 1 {
		t.Errorf("outcomes %v, result %+v", o, r.res)
	}
	if _, _, requeued := port.snapshot(); !slices.Equal(requeued, []string{"b", "c"}) {
		t.Errorf("requeued %v", requeued)
	}
}

// A held message the port cannot read back (its store on disk failed) is
// never published: it and what follows are put back untouched, and the run
// stops saying why.
func TestAHeldMessageThatCannotBeReadBackIsNotPublished(t *testing.T) {
	port := newFakePort()
	port.loadErr = map[string]error{"b": errors.New("read /home/u/.cache/dlqt/hold-1.bin: input/output error")}
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b", "c")
	r := drive(t, plan, port, nil, nil)
	if r.err != nil || !strings.Contains(r.res.StoppedBecause, "the held message could not be read back: read /home/u/.cache/dlqt/hold-1.bin") {
		t.Fatalf("result %+v, %v", r.res, r.err)
	}
	if o := outcomes(r.res, "a", "b", "c"); !slices.Equal(o, []Outcome{OutcomeResolved, OutcomeUntouched, OutcomeUntouched}) || r.res.Published != 1 {
		t.Errorf("outcomes %v, result %+v", o, r.res)
	}
	if published, _, requeued := port.snapshot(); !slices.Equal(published, []string{"a"}) || !slices.Equal(requeued, []string{"b", "c"}) {
		t.Errorf("published %v, requeued %v", published, requeued)
	}
}

// A lost connection ends the replay resumable even when every ack it sent
// went out without an error: a node killed before it applied them puts
// those sources back, and only a resume (which acks them again) can tell.
func TestAConnectionLossAlwaysLeavesTheReplayResumable(t *testing.T) {
	port := newFakePort()
	port.onPublish = []Signal{{Kind: SignalLost, Reason: "hold connection closed by the broker"}}
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b")
	r := drive(t, plan, port, nil, nil)
	if r.err != nil || !r.res.Resumable || len(r.res.Unacked) != 0 {
		t.Fatalf("result %+v, %v", r.res, r.err)
	}
	if got := r.spy.actions(); slices.Contains(got, "replay-finish") || lastRecord(r.spy).Details["connection_lost"] != true {
		t.Fatalf("journal %v, last %+v", got, lastRecord(r.spy))
	}
	st, err := Find(journalOf(t, r.spy), plan.ID)
	if err != nil || !st.Interrupted() {
		t.Fatalf("state %+v, %v: --resume would refuse", st, err)
	}
	// a's ack never reached the queue: the resume finds it back and acks it.
	r2 := drive(t, st.ResumePlan(), newFakePort(), nil, nil)
	if r2.err != nil || !slices.Equal(r2.res.AckedAgain, []string{"a"}) || r2.res.Resolved != 2 {
		t.Errorf("resume: %+v, %v", r2.res, r2.err)
	}
}
