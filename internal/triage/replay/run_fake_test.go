package replay

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// These tests run whole replays without a broker: a fake port answers
// publishes as scripted, and a fake clock, advanced in 10 ms steps, stands
// in for pacing, the observation window and the confirm timeout.

func fakePlan(opts Options, ids ...string) Plan {
	p := Plan{ID: "rp-fake", Vhost: "v", Queue: "orders.parking", Options: opts.withDefaults(), Allowed: true}
	for _, id := range ids {
		p.Items.Append(Item{ID: id, Route: triage.Route{Exchange: "orders", RoutingKey: "order.created"}, Original: true})
	}
	return p
}

type fakeRun struct {
	res     Result
	err     error
	spy     *journalSpy
	elapsed time.Duration // on the fake clock
}

// drive runs plan to its end; during, if set, sees every progress report
// on the run's goroutine.
func drive(t *testing.T, plan Plan, port clockedPort, ctl chan Command, during func(Progress)) fakeRun {
	t.Helper()
	return driveWith(t, context.Background(), &journalSpy{}, plan, port, ctl, during)
}

// driveWith is drive with a context and a journal of the test's; the
// clock is the port's when it has one.
func driveWith(t *testing.T, ctx context.Context, spy *journalSpy, plan Plan, port clockedPort, ctl chan Command, during func(Progress)) fakeRun {
	t.Helper()
	clock := port.fakeClock()
	if clock == nil {
		clock = newFakeClock()
	}
	start := clock.Now()
	out := fakeRun{spy: spy}
	done := make(chan struct{})
	go func() {
		defer close(done)
		rn := Runner{Port: port, Journal: out.spy, Clock: clock, Progress: during}
		out.res, out.err = rn.Run(ctx, plan, ctl)
	}()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case <-done:
			out.elapsed = clock.Now().Sub(start)
			return out
		case <-deadline:
			t.Fatalf("the replay did not end; journal so far: %v", out.spy.actions())
		default:
		}
		clock.Advance(10 * time.Millisecond)
		time.Sleep(20 * time.Microsecond)
	}
}

func outcomes(res Result, ids ...string) []Outcome {
	var out []Outcome
	for _, id := range ids {
		out = append(out, res.Outcome(id))
	}
	return out
}

func TestARunResolvesEveryMessageOnTheInjectedClock(t *testing.T) {
	port := newFakePort()
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: 2 * time.Second, AutoRamp: true}, "a", "b", "c", "d")
	r := drive(t, plan, port, nil, nil)
	if r.err != nil || r.res.StoppedBecause != "" || r.res.Resolved != 4 {
		t.Fatalf("result %+v, %v", r.res, r.err)
	}
	published, acked, requeued := port.snapshot()
	if !slices.Equal(published, []string{"a", "b", "c", "d"}) || len(acked) != 4 || len(requeued) != 0 {
		t.Errorf("published %v acked %v requeued %v", published, acked, requeued)
	}
	got := r.spy.actions()
	if got[0] != "replay-plan" || got[1] != "replay-start" || got[len(got)-1] != "replay-finish" || slices.Contains(got, "replay-stop") {
		t.Errorf("journal %v", got)
	}
	// 1 s for the canary's token, 2 s observed, 3 paced at 10/s, then the
	// watch after the last publish (2 s, the observation window): ~5.3 s
	// of the fake clock, none of it waited for.
	if r.elapsed < 5*time.Second || r.elapsed > 8*time.Second {
		t.Errorf("the run took %v on its clock", r.elapsed)
	}
	if rate := r.res.PacedRate(); rate > 10.5 {
		t.Errorf("paced at %.1f msg/s, above the ceiling 10", rate)
	}
}

func TestANackStopsTheRunAndKeepsTheRestParked(t *testing.T) {
	port := newFakePort()
	port.answers["b"] = &PublishResult{Why: "nack"}
	plan := fakePlan(Options{Rate: 5, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b", "c", "d", "e")
	r := drive(t, plan, port, nil, nil)
	if r.err != nil || !strings.Contains(r.res.StoppedBecause, "did not take 1 message(s) (nack)") {
		t.Fatalf("stopped because %q, err %v", r.res.StoppedBecause, r.err)
	}
	if o := outcomes(r.res, "a", "b"); o[0] != OutcomeResolved || o[1] != OutcomeReturned || r.res.Why["b"] != "nack" {
		t.Errorf("outcomes %v, why %v", o, r.res.Why)
	}
	_, acked, requeued := port.snapshot()
	if slices.Contains(acked, "b") || !slices.Contains(requeued, "b") {
		t.Errorf("the nacked source was not put back: acked %v requeued %v", acked, requeued)
	}
	for _, id := range []string{"c", "d", "e"} {
		if o := r.res.Outcome(id); o == OutcomeResolved {
			t.Errorf("%s resolved after the stop", id)
		} else if o == OutcomeUntouched && !slices.Contains(requeued, id) {
			t.Errorf("untouched %s was not requeued: %v", id, requeued)
		}
	}
	got := strings.Join(r.spy.actions(), " ")
	if !strings.HasSuffix(got, "replay-stop replay-finish") {
		t.Errorf("journal %s", got)
	}
}

func TestAnAbortWhileAwaitingTheRampPublishesNothingMore(t *testing.T) {
	port := newFakePort()
	ctl := make(chan Command, 1)
	sent := false
	abortWhenWaiting := func(p Progress) {
		if p.Phase == PhaseAwaitingRamp && !sent {
			sent = true
			ctl <- Abort
		}
	}
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 2, Observe: time.Second}, "a", "b", "c")
	r := drive(t, plan, port, ctl, abortWhenWaiting)
	if r.err != nil || !r.res.Aborted || r.res.Published != 1 {
		t.Fatalf("result %+v, %v", r.res, r.err)
	}
	if o := outcomes(r.res, "a", "b", "c"); !slices.Equal(o, []Outcome{OutcomeResolved, OutcomeUntouched, OutcomeUntouched}) {
		t.Errorf("outcomes %v", o)
	}
	published, _, requeued := port.snapshot()
	if !slices.Equal(published, []string{"a"}) || !slices.Equal(requeued, []string{"b", "c"}) {
		t.Errorf("published %v requeued %v", published, requeued)
	}
	last := r.spy.records[len(r.spy.records)-1]
	if !slices.Contains(r.spy.actions(), "replay-abort") || last.Action != triage.ActionReplayFinish || last.Reason != "aborted" {
		t.Errorf("journal %v, last %+v", r.spy.actions(), last)
	}
}

// The confirm timeout runs on the run's clock: a publish the broker never
// answers counts as not taken once ConfirmTimeout has passed there.
func TestAnUnansweredPublishTimesOutOnTheRunsClock(t *testing.T) {
	port := newFakePort()
	port.answers["a"] = nil
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, ConfirmTimeout: 5 * time.Second}, "a", "b")
	began := time.Now()
	r := drive(t, plan, port, nil, nil)
	if r.err != nil || r.res.Outcome("a") != OutcomeReturned || !strings.Contains(r.res.StoppedBecause, "no confirm in time") {
		t.Fatalf("result %+v, %v", r.res, r.err)
	}
	if r.elapsed < 6*time.Second {
		t.Errorf("timed out after %v on the run's clock, want the 1 s token plus 5 s", r.elapsed)
	}
	if real := time.Since(began); real > 5*time.Second {
		t.Errorf("the fake clock's 5 s took %v of real time", real)
	}
	if _, acked, requeued := port.snapshot(); len(acked) != 0 || !slices.Equal(requeued, []string{"a", "b"}) {
		t.Errorf("acked %v requeued %v", acked, requeued)
	}
}
