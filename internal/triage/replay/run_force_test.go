package replay

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// SIGINT with copies in flight whose confirms never come: the run waited
// out the whole confirm timeout (30 s), deaf to a second Ctrl-C. Forced,
// it stops waiting at once and names each copy as possibly delivered twice.
func TestASecondInterruptStopsWaitingForConfirms(t *testing.T) {
	clock := newFakeClock()
	port := newFakePort()
	port.clock = clock
	for _, id := range []string{"b", "c"} {
		port.answers[id] = nil // never answered: the broker blocked, say
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	force := make(chan struct{})
	interrupted := false
	var at time.Time
	twice := func(p Progress) {
		if p.InFlight == 2 && !interrupted {
			interrupted, at = true, clock.Now()
			cancel() // the first Ctrl-C
			go func() {
				time.Sleep(50 * time.Millisecond)
				close(force) // the second
			}()
		}
	}
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true, ConfirmTimeout: time.Hour}, "a", "b", "c", "d")
	r := driveWith(t, WithForce(ctx, force), &journalSpy{}, plan, port, nil, twice)
	if !interrupted {
		t.Fatalf("b and c were never in flight together: %+v", r.res)
	}
	if waited := clock.Now().Sub(at); waited >= time.Hour {
		t.Fatalf("the run waited %s after the second interrupt: the confirm timeout, not the operator, ended it", waited)
	}
	if !slices.Equal(r.res.Unconfirmed, []string{"b", "c"}) {
		t.Errorf("unconfirmed %v: want b and c named as possibly delivered twice", r.res.Unconfirmed)
	}
	if !strings.Contains(r.res.Why["b"], "may be delivered twice") {
		t.Errorf("why b: %q", r.res.Why["b"])
	}
	_, _, requeued := port.snapshot()
	if !slices.Contains(requeued, "b") || !slices.Contains(requeued, "d") {
		t.Errorf("requeued %v: the sources not confirmed go back", requeued)
	}
}

// resumableCause is how a server shutting down cancels its sessions.
type resumableCause struct{}

func (resumableCause) Error() string   { return "dlqt serve is shutting down" }
func (resumableCause) Resumable() bool { return true }

// `dlqt serve`'s SIGTERM cancels the sessions' work: a replay it stops must
// stay resumable (the README promised it; the run journalled an abort and
// a finish, and --resume refused "not interrupted").
func TestAReplayStoppedByAShutdownIsResumable(t *testing.T) {
	port := newFakePort()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b", "c", "d")
	shutdown := func(p Progress) {
		if p.Published >= 2 {
			cancel(resumableCause{})
		}
	}
	r := driveWith(t, ctx, &journalSpy{}, plan, port, nil, shutdown)
	if r.err != nil || !r.res.Resumable || r.res.Aborted {
		t.Fatalf("result %+v, %v: a shutdown must leave the replay resumable", r.res, r.err)
	}
	st, err := Find(journalOf(t, r.spy), plan.ID)
	if err != nil || !st.Interrupted() {
		t.Fatalf("state %+v, %v: --resume would refuse (journal %v)", st, err, r.spy.actions())
	}
	port2 := newFakePort()
	r2 := drive(t, st.ResumePlan(), port2, nil, nil)
	if r2.err != nil || r2.res.Resolved != 4 {
		t.Fatalf("resume: %+v, %v", r2.res, r2.err)
	}
	published, _, _ := port.snapshot()
	published2, _, _ := port2.snapshot()
	for _, id := range published2 {
		if slices.Contains(published, id) && r.res.Outcome(id) == OutcomeResolved {
			t.Errorf("%s was resolved before the shutdown and published again on resume", id)
		}
	}
}
