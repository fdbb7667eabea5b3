package replay

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// deadLetterEvery makes the destination "orders" dead-letter a message of
// its own every period of the port's clock, as a destination in trouble
// does during a live incident, until the test ends.
func deadLetterEvery(t *testing.T, port *fakePort, period time.Duration) {
	tick := port.clock.NewTicker(period)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); tick.Stop() })
	go func() {
		for n := 0; ; n++ {
			select {
			case <-tick.C():
			case <-stop:
				return
			}
			select {
			case port.signals <- Signal{Kind: SignalDeadLetter, ID: fmt.Sprintf("own-%d", n), Queue: "orders"}:
			case <-stop:
				return
			}
		}
	}()
}

func baselinePort() *fakePort {
	port := newFakePort()
	port.clock = newFakeClock()
	port.signals = make(chan Signal, 256)
	return port
}

func baselinePlan(ids int) Plan {
	var names []string
	for i := range ids {
		names = append(names, fmt.Sprintf("m-%d", i))
	}
	plan := fakePlan(Options{Rate: 10, Canary: 2, CanaryRate: 2, Observe: 2 * time.Second, AutoRamp: true, Baseline: 5 * time.Second}, names...)
	plan.DestinationQueues = []string{"orders"}
	return plan
}

// A destination that dead-letters two messages a second of its own, before
// and during the replay, does not stop it: that rate was counted before the
// canary, and nothing above it came. The journal says how many came at the
// baseline, and names none of them collateral.
func TestDeadLettersAtTheBaselineRateDoNotStopTheReplay(t *testing.T) {
	port := baselinePort()
	deadLetterEvery(t, port, 500*time.Millisecond)
	r := drive(t, baselinePlan(60), port, nil, nil)
	if r.err != nil || r.res.StoppedBecause != "" || r.res.Resolved != 60 {
		t.Fatalf("result: %d resolved, stopped %q, %v", r.res.Resolved, r.res.StoppedBecause, r.err)
	}
	if r.res.BaselineRate < 1.5 || r.res.BaselineRate > 2.5 || r.res.DeadLettersAtBaseline == 0 || len(r.res.Collateral) > 0 {
		t.Errorf("baseline %.2f/s, %d at the baseline, collateral %v", r.res.BaselineRate, r.res.DeadLettersAtBaseline, r.res.Collateral)
	}
	for _, rec := range r.spy.records {
		if rec.Reason == string(OutcomeCollateral) {
			t.Errorf("journalled as collateral: %v", rec.MessageIDs)
		}
	}
	if d := lastRecord(r.spy).Details; d["dead_letters_at_baseline"] != r.res.DeadLettersAtBaseline {
		t.Errorf("finish details %v", d)
	}
	t.Logf("baseline %.2f/s; %d dead letters at the baseline over %s", r.res.BaselineRate, r.res.DeadLettersAtBaseline, r.elapsed)
}

// The same destination, but the canary pushes twenty more out at once:
// that is above what the baseline accounts for, so the run stops, and every
// dead letter since the canary began is journalled as collateral.
func TestCollateralAboveTheBaselineStopsTheReplay(t *testing.T) {
	port := baselinePort()
	deadLetterEvery(t, port, 500*time.Millisecond)
	for i := range 20 {
		port.onPublish = append(port.onPublish, Signal{Kind: SignalDeadLetter, ID: fmt.Sprintf("pushed-%d", i), Queue: "orders"})
	}
	plan := baselinePlan(60)
	r := drive(t, plan, port, nil, nil)
	if r.err != nil || !strings.Contains(r.res.StoppedBecause, "before the replay accounts for") || r.res.BaselineRate < 1.5 || r.res.BaselineRate > 2.5 {
		t.Fatalf("stopped %q, baseline %.2f/s, %v", r.res.StoppedBecause, r.res.BaselineRate, r.err)
	}
	// It stops as soon as the dead letters exceed the allowance (about 6
	// half a second after the canary began, at 2/s).
	if len(r.res.Collateral) < 5 || !slices.Contains(r.res.Collateral, "pushed-0") {
		t.Errorf("collateral %v", r.res.Collateral)
	}
	st, err := Find(journalOf(t, r.spy), plan.ID)
	if err != nil || len(st.Collateral) != len(r.res.Collateral) {
		t.Errorf("journal: collateral %v, %v", st.Collateral, err)
	}
	if published, _, _ := port.snapshot(); len(published) > 2 {
		t.Errorf("published %d after the canary's collateral", len(published))
	}
}

// A dead letter from the destination while the sources are held came
// before anything was published: it is the destination's own, never
// collateral, even with no baseline window beyond the hold.
func TestADeadLetterDuringTheHoldIsNotCollateral(t *testing.T) {
	port := newFakePort()
	port.onHold = []Signal{{Kind: SignalDeadLetter, ID: "own-0", Queue: "orders"}}
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b", "c")
	plan.DestinationQueues = []string{"orders"}
	r := drive(t, plan, port, nil, nil)
	if r.err != nil || r.res.StoppedBecause != "" || r.res.Resolved != 3 || len(r.res.Collateral) > 0 {
		t.Errorf("result %+v, %v", r.res, r.err)
	}
}

// Without a baseline a single dead letter from the destination during the
// run is collateral (what TestCollateralDeadLettersStopTheCanary shows);
// the allowance grows with the baseline rate and the time since the canary.
func TestCollateralAllowance(t *testing.T) {
	clock := newFakeClock()
	r := &run{clock: clock}
	if got := r.collateralAllowed(); got != 0 {
		t.Errorf("no baseline: %d allowed", got)
	}
	// 10 dead letters in a 5 s baseline: 2/s, judged at (10 + 2√10)/5.
	r.start = clock.Now()
	r.base.counted = 10
	clock.Advance(5 * time.Second)
	r.base.canaryOK = true
	r.opts = Options{Rate: 10}
	r.endBaseline()
	if r.base.rate != 2 {
		t.Fatalf("rate %.2f/s, want 2", r.base.rate)
	}
	for _, c := range []struct {
		after time.Duration
		want  int
	}{{0, 1}, {time.Second, 9}, {10 * time.Second, 50}, {100 * time.Second, 381}} {
		clock.Advance(c.after - clock.Now().Sub(r.base.from))
		if got := r.collateralAllowed(); got != c.want {
			t.Errorf("after %s at 2/s: %d allowed, want %d", c.after, got, c.want)
		}
	}
}

// The baseline window runs from the start of the run, the hold included
// (the watch counts while the hold reads): after a hold of 4 s a baseline
// of 5 s waits 1 s more, not 5, and after a hold of 8 s none; the rate is
// still taken over the whole window.
func TestTheHoldCountsTowardTheBaseline(t *testing.T) {
	for _, tc := range []struct {
		hold, canaryAt time.Duration
	}{{4 * time.Second, 5 * time.Second}, {8 * time.Second, 8 * time.Second}} {
		port := baselinePort()
		port.holdTakes = tc.hold
		deadLetterEvery(t, port, 500*time.Millisecond)
		start := port.clock.Now()
		var canary time.Duration
		r := drive(t, baselinePlan(10), port, nil, func(p Progress) {
			if p.Phase == PhaseCanary && canary == 0 {
				canary = port.clock.Now().Sub(start)
			}
		})
		if r.err != nil || r.res.Resolved != 10 {
			t.Fatalf("hold %s: %d resolved, stopped %q, %v", tc.hold, r.res.Resolved, r.res.StoppedBecause, r.err)
		}
		// The fake clock runs on while the run's goroutine waits for a CPU
		// (a loaded CI run saw 8.31 s for 8); what is told apart is the
		// hold counted (5 s, 8 s) from not counted (9 s, 13 s).
		if canary < tc.canaryAt || canary > tc.canaryAt+1500*time.Millisecond {
			t.Errorf("hold %s, baseline 5s: the canary began %s after the start, want %s", tc.hold, canary, tc.canaryAt)
		}
		if r.res.BaselineRate < 1.5 || r.res.BaselineRate > 2.5 {
			t.Errorf("hold %s: baseline rate %.2f/s, want about 2", tc.hold, r.res.BaselineRate)
		}
	}
}
