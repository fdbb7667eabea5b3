package ui

import (
	"context"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// finishingPort is a replay port whose Finish says it waits for 4,000 acks
// and returns once released; any other method is never called here.
type finishingPort struct {
	replay.Port
	release chan struct{}
	closed  bool
}

func (p *finishingPort) Finish(_ context.Context, waiting func(int)) error {
	waiting(4000)
	<-p.release
	return nil
}

func (p *finishingPort) Close() error { p.closed = true; return nil }

// The TUI's replay ends its port with Finish, as dlqt replay does: the
// screen hears that the queue is still applying the source acks, and the
// outcome comes only once it has.
func TestTheTUIsReplayShowsItsOutcomeOnceTheQueueAppliedTheAcks(t *testing.T) {
	port := &finishingPort{release: make(chan struct{})}
	e := engine{runReplay: func(_ context.Context, plan replay.Plan, _ replay.Port, _ triage.Recorder, _ <-chan replay.Command, report func(replay.Progress)) (replay.Result, error) {
		report(replay.Progress{ReplayID: plan.ID, Phase: replay.PhaseDone, Total: 3, Published: 3, Confirmed: 3})
		return replay.Result{ID: plan.ID, Resolved: 3}, nil
	}}
	r, ctx := newReplayRun(context.Background(), 1)
	defer r.cancel()
	open := func(context.Context, string, string, bool) (replay.Port, error) { return port, nil }
	msgs := make(chan any, 16)
	go func() {
		msgs <- r.start(ctx, e, open, replay.Plan{ID: "rp-1", Queue: "orders.parking"}, false, nil)()
		for {
			m := r.next()()
			msgs <- m
			if _, done := m.(replayDoneMsg); done {
				return
			}
		}
	}()
	deadline := time.After(10 * time.Second)
	for settling := false; !settling; {
		select {
		case m := <-msgs:
			switch m := m.(type) {
			case replayDoneMsg:
				t.Fatalf("the outcome came before the queue applied the acks: %+v", m.res)
			case replayProgressMsg:
				settling = m.p.SettlingAcks == 4000 && m.p.Phase == replay.PhaseDone && m.p.Published == 3
			}
		case <-deadline:
			t.Fatal("no progress said the replay waits for 4,000 acks")
		}
	}
	close(port.release)
	for {
		select {
		case m := <-msgs:
			if d, ok := m.(replayDoneMsg); ok {
				if d.err != nil || d.res.Resolved != 3 {
					t.Errorf("outcome %+v, %v", d.res, d.err)
				}
				if port.closed {
					t.Error("Close was called on a port that has Finish")
				}
				return
			}
		case <-deadline:
			t.Fatal("no outcome once the acks were applied")
		}
	}
}
