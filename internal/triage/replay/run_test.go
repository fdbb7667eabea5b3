package replay

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// journalSpy keeps the records a replay writes. Once it meets an action
// in failFrom it refuses that record and every later one: a journal whose
// disk filled up does not come back by itself.
type journalSpy struct {
	mu       sync.Mutex
	records  []triage.Record
	failFrom map[triage.Action]bool
	failing  bool
}

func (j *journalSpy) Record(r triage.Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.failing || j.failFrom[r.Action] {
		j.failing = true
		return errors.New("no space left on device")
	}
	j.records = append(j.records, r)
	return nil
}

func (j *journalSpy) actions() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	for _, r := range j.records {
		out = append(out, string(r.Action))
	}
	return out
}

func TestNextRateDoublesUpToTheCeiling(t *testing.T) {
	rate, ceiling := 1.0, 12.0
	var steps []float64
	for range 6 {
		rate = NextRate(rate, ceiling)
		steps = append(steps, rate)
	}
	want := []float64{2, 4, 8, 12, 12, 12}
	for i := range want {
		if steps[i] != want[i] {
			t.Fatalf("ramp steps %v, want %v", steps, want)
		}
	}
	if NextRate(0, 7) != 7 {
		t.Error("a zero rate does not ramp to the ceiling")
	}
}

func runFor(opts Options, items int) (*run, *journalSpy) {
	plan := Plan{ID: "rp-test", Queue: "q", Options: opts}
	for i := range items {
		id := string(rune('a' + i))
		plan.Items.Append(Item{ID: id})
	}
	spy := &journalSpy{}
	r := newRun(plan, Runner{Journal: spy})
	for _, it := range plan.Items.All() {
		r.queue = append(r.queue, it.ID)
	}
	return r, spy
}

func TestRampUpAfterTheCanaryDoublesToTheCeiling(t *testing.T) {
	r, spy := runFor(Options{Rate: 10, CanaryRate: 1}, 20)
	r.afterObservation()
	if r.phase != PhaseAwaitingRamp || r.mayPublish() {
		t.Fatalf("after a clean observation without AutoRamp: phase %s, may publish %v", r.phase, r.mayPublish())
	}
	var rates []float64
	for range 5 {
		if err := r.command(RampUp); err != nil {
			t.Fatal(err)
		}
		rates = append(rates, r.target)
	}
	want := []float64{2, 4, 8, 10, 10}
	for i := range want {
		if rates[i] != want[i] {
			t.Fatalf("rates %v, want %v", rates, want)
		}
	}
	if r.phase != PhaseRunning || !r.mayPublish() {
		t.Errorf("phase %s after ramping", r.phase)
	}
	// Four ramps changed the rate; the fifth, at the ceiling, journals nothing.
	if n := strings.Count(strings.Join(spy.actions(), " "), string(triage.ActionReplayRamp)); n != 4 {
		t.Errorf("%d ramp records, want 4: %v", n, spy.actions())
	}
	if r.untilToken() <= 0 {
		t.Error("a new rate starts with a token saved up: the phase would open with a burst")
	}
}

func TestHeadlessGoesOnAtTheCeilingNeverAbove(t *testing.T) {
	r, _ := runFor(Options{Rate: 200, CanaryRate: 500, AutoRamp: true}.withDefaults(), 3)
	if r.opts.CanaryRate != 200 {
		t.Errorf("canary rate %v above the ceiling 200", r.opts.CanaryRate)
	}
	r.afterObservation()
	if r.phase != PhaseRunning || r.target != 200 {
		t.Errorf("AutoRamp: phase %s at %v, want running at 200", r.phase, r.target)
	}
	if err := r.command(RampUp); err != nil || r.target != 200 {
		t.Errorf("ramp above the ceiling: %v, %v", r.target, err)
	}
}

// A replay that has not held its messages yet has nothing queued, which
// looked finished: the first frame of the gauge said FINISHED.
func TestAReplayBeforeItsHoldIsHoldingNotDone(t *testing.T) {
	r, _ := runFor(Options{Rate: 10, CanaryRate: 1}, 5)
	r.queue = nil // as before Hold returns
	if got := r.snapshot().Phase; got != PhaseHolding {
		t.Errorf("phase %s before the hold, want %s", got, PhaseHolding)
	}
}

func TestPauseResumeAbort(t *testing.T) {
	r, spy := runFor(Options{Rate: 10, CanaryRate: 1, AutoRamp: true}, 5)
	r.afterObservation()
	steps := []struct {
		cmd     Command
		publish bool
	}{
		{Pause, false},
		{Pause, false}, // twice is once
		{Resume, true},
		{Abort, false},
		{Resume, false}, // an aborted replay stays aborted
	}
	for i, s := range steps {
		if err := r.command(s.cmd); err != nil {
			t.Fatal(err)
		}
		if r.mayPublish() != s.publish {
			t.Errorf("step %d: may publish %v, want %v", i, r.mayPublish(), s.publish)
		}
	}
	got := strings.Join(spy.actions(), " ")
	if got != "replay-pause replay-resume replay-abort" {
		t.Errorf("journal: %s", got)
	}
	if r.snapshot().Phase != PhaseAborted || !r.finished() {
		t.Errorf("phase %s, finished %v", r.snapshot().Phase, r.finished())
	}
}

func TestReplayThresholds(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
		t    Tally
		want string
	}{
		{"clean", Options{MaxBacklog: 10}, Tally{DestinationDepth: 15, BaseDepth: 5}, ""},
		{"failed again", Options{}, Tally{FailedAgain: 1, FailedIDs: []string{"m-1"}, DestinationDepth: -1, BaseDepth: -1}, "1 replayed message(s) failed again"},
		{"returned", Options{}, Tally{Returned: 2, ReturnWhy: "312 NO_ROUTE", DestinationDepth: -1, BaseDepth: -1}, "did not take 2 message(s) (312 NO_ROUTE)"},
		{"backlog over", Options{MaxBacklog: 10}, Tally{DestinationDepth: 16, BaseDepth: 5}, "grew by 11 messages (limit 10)"},
		{"backlog without limit", Options{}, Tally{DestinationDepth: 100000, BaseDepth: 0}, ""},
		{"backlog unknown", Options{MaxBacklog: 1}, Tally{DestinationDepth: -1, BaseDepth: -1}, ""},
	} {
		got := Threshold(c.opts, c.t)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSettledOutcomesAndTheResult(t *testing.T) {
	r, _ := runFor(Options{}, 4)
	r.queue = nil
	r.settled(confirmResult{"a", PublishResult{Confirmed: true}})
	r.settled(confirmResult{"b", PublishResult{Why: "nack"}})
	r.settled(confirmResult{"c", PublishResult{Confirmed: true}})
	r.signal(Signal{Kind: SignalFailedAgain, ID: "c", Reason: "rejected in queue orders"})
	r.signal(Signal{Kind: SignalFailedAgain, ID: "zz"}) // not ours
	res := r.result()
	want := map[string]Outcome{"a": OutcomeResolved, "b": OutcomeReturned, "c": OutcomeFailedAgain, "d": OutcomeUntouched}
	for id, o := range want {
		if res.Outcome(id) != o {
			t.Errorf("%s: %s, want %s", id, res.Outcome(id), o)
		}
	}
	if res.Resolved != 1 || res.Returned != 1 || res.FailedAgain != 1 || res.Untouched != 1 || res.Why["b"] != "nack" {
		t.Errorf("result %+v", res)
	}
	if len(r.toConfirm) != 2 || len(r.toReturn) != 1 || len(r.toFail) != 1 {
		t.Errorf("to journal: confirmed %v returned %v failed %v", r.toConfirm, r.toReturn, r.toFail)
	}
}

// On the broker a copy its consumer rejects at once can be seen back in
// the parking queue before its publish confirm is read: it must still end
// failed-again (the stop reason and the result agree), and its source is
// acked all the same, since the copy is the one parked now.
func TestAFailedAgainSeenBeforeItsConfirmStaysFailedAgain(t *testing.T) {
	r, _ := runFor(Options{}, 2)
	r.queue = nil
	r.signal(Signal{Kind: SignalFailedAgain, ID: "a", Reason: "rejected in queue orders"})
	r.settled(confirmResult{"a", PublishResult{Confirmed: true}})
	res := r.result()
	if res.Outcome("a") != OutcomeFailedAgain || res.FailedAgain != 1 || res.Resolved != 0 {
		t.Errorf("outcome %s, result %+v: want failed-again", res.Outcome("a"), res)
	}
	if len(r.toConfirm) != 1 || r.toConfirm[0] != "a" {
		t.Errorf("the source of a confirmed copy must be acked: toConfirm %v", r.toConfirm)
	}
}

func TestTheLastCopiesAreWatchedBeforeTheReport(t *testing.T) {
	r, _ := runFor(Options{Rate: 10, Observe: time.Minute, AutoRamp: true}, 3)
	r.afterObservation()
	r.queue, r.pacedCount = nil, 3
	if r.finished() {
		t.Fatal("finished before the last copies were watched")
	}
	r.advance()
	if r.tailEnd.IsZero() || time.Until(r.tailEnd) > maxTail || r.finished() || r.snapshot().Phase != PhaseObserving {
		t.Fatalf("tail watch not opened: until %v, phase %s", time.Until(r.tailEnd), r.snapshot().Phase)
	}
	r.tailEnd = time.Now().Add(-time.Millisecond)
	if !r.finished() || r.snapshot().Phase != PhaseDone {
		t.Errorf("not finished after the watch: phase %s", r.snapshot().Phase)
	}
}

// blindPort is a port whose queue no watch queue can be bound like.
type blindPort struct {
	*fakePort
	blind bool
}

func (p blindPort) Blind() bool { return p.blind }

// A port that sees no copy fail again (its parking queue is reached only
// through the default exchange) has nothing to watch after the last
// publish: the run reports at once, unless a backlog limit asks for the
// destination's depth. The move benchmark waited its 1 s for nothing.
func TestTheLastCopiesOfABlindReplayAreNotWaitedFor(t *testing.T) {
	for _, tc := range []struct {
		name       string
		port       Port
		maxBacklog int
		waits      bool
	}{
		{"watched", blindPort{newFakePort(), false}, 0, true},
		{"blind", blindPort{newFakePort(), true}, 0, false},
		{"blind with a backlog limit", blindPort{newFakePort(), true}, 100, true},
		{"a port that cannot tell", newFakePort(), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := runFor(Options{Rate: 10, Observe: time.Minute, MaxBacklog: tc.maxBacklog, AutoRamp: true}, 3)
			r.port = tc.port
			r.afterObservation()
			r.queue, r.pacedCount = nil, 3
			if err := r.advance(); err != nil {
				t.Fatal(err)
			}
			if r.finished() == tc.waits {
				t.Errorf("finished %t right after the last confirm, want %t (tail until %v)", r.finished(), !tc.waits, time.Until(r.tailEnd).Round(time.Second))
			}
		})
	}
}

func TestABlockedBrokerHoldsPublishingAndSaysWhy(t *testing.T) {
	r, _ := runFor(Options{Rate: 10, AutoRamp: true}, 3)
	r.afterObservation()
	r.signal(Signal{Kind: SignalBlocked, Reason: "low on disk"})
	if r.mayPublish() || r.snapshot().Blocked != "low on disk" {
		t.Errorf("blocked: may publish %v, gauge says %q", r.mayPublish(), r.snapshot().Blocked)
	}
	r.signal(Signal{Kind: SignalUnblocked})
	if !r.mayPublish() || r.snapshot().Blocked != "" {
		t.Error("publishing did not go on after the unblock")
	}
	r.signal(Signal{Kind: SignalLost, Reason: "hold channel closed"})
	if r.mayPublish() || !strings.Contains(r.snapshot().StoppedBecause, "hold channel closed") {
		t.Errorf("a lost connection did not stop the replay: %q", r.snapshot().StoppedBecause)
	}
}
