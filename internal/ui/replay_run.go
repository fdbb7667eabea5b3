package ui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// replayProgressMsg is the latest progress of a running replay;
// replayDoneMsg ends it.
type replayProgressMsg struct {
	id int
	p  replay.Progress
}

type replayDoneMsg struct {
	id  int
	res replay.Result
	err error
}

func (replayProgressMsg) owner() screenID { return screenReplay }
func (replayDoneMsg) owner() screenID     { return screenReplay }

// replayRun is one RunReplay in flight. Like a browse, its progress comes
// through a one-slot channel that keeps only the latest report, so a slow
// screen never slows the replay; keys reach it through ctl.
type replayRun struct {
	id       int
	cancel   context.CancelFunc
	ctl      chan replay.Command
	progress chan replayProgressMsg
	done     chan replayDoneMsg
	ended    chan struct{} // closed when RunReplay returned and the port closed
	// revise gives the plan's edited items their latest approved
	// revision, off the Update loop, before anything is held; nil: none.
	revise func(*replay.Plan) error
}

func newReplayRun(parent context.Context, id int) (*replayRun, context.Context) {
	ctx, cancel := context.WithCancel(parent)
	return &replayRun{
		id: id, cancel: cancel,
		ctl:      make(chan replay.Command, 4),
		progress: make(chan replayProgressMsg, 1),
		done:     make(chan replayDoneMsg, 1),
		ended:    make(chan struct{}),
	}, ctx
}

// report publishes the latest progress without ever blocking the replay.
func (r *replayRun) report(p replay.Progress) {
	msg := replayProgressMsg{id: r.id, p: p}
	select {
	case r.progress <- msg:
		return
	default:
	}
	select { // drop the report the screen has not taken yet
	case <-r.progress:
	default:
	}
	select {
	case r.progress <- msg:
	default:
	}
}

// start opens the broker side and runs the replay in its own goroutine.
func (r *replayRun) start(ctx context.Context, e engine, open func(context.Context, string, string, bool) (replay.Port, error),
	plan replay.Plan, acceptCost bool, rec triage.Recorder) tea.Cmd {
	return func() tea.Msg {
		go func() {
			defer close(r.ended)
			if r.revise != nil {
				if err := r.revise(&plan); err != nil {
					r.done <- replayDoneMsg{id: r.id, res: replay.Result{ID: plan.ID}, err: fmt.Errorf("reading the revisions of edited messages: %w", err)}
					return
				}
			}
			port, err := open(ctx, plan.ID, plan.Queue, acceptCost)
			if err != nil {
				r.done <- replayDoneMsg{id: r.id, res: replay.Result{ID: plan.ID}, err: err}
				return
			}
			var (
				mu   sync.Mutex
				last replay.Progress
			)
			res, err := e.runReplay(ctx, plan, port, rec, r.ctl, func(p replay.Progress) {
				mu.Lock()
				last = p
				mu.Unlock()
				r.report(p)
			})
			settling := func(acks int) {
				mu.Lock()
				p := last
				mu.Unlock()
				p.SettlingAcks = acks
				r.report(p)
			}
			if cerr := endPort(ctx, port, settling); cerr != nil && err == nil {
				err = fmt.Errorf("ending the replay: %w", cerr)
			}
			r.done <- replayDoneMsg{id: r.id, res: res, err: err}
		}()
		return r.wait()
	}
}

// finisher is a replay port that waits, once the replay ended, until the
// queue has applied the source acks (broker.Replay.Finish).
type finisher interface {
	Finish(ctx context.Context, waiting func(acks int)) error
}

// endPort ends port: with Finish when it has one, so the outcome shows
// once the broker took the acks, else with Close.
func endPort(ctx context.Context, port replay.Port, waiting func(acks int)) error {
	if f, ok := port.(finisher); ok {
		return f.Finish(ctx, waiting)
	}
	return port.Close()
}

func (r *replayRun) next() tea.Cmd { return func() tea.Msg { return r.wait() } }

// wait prefers the end to a last progress report, so the gauge never
// goes back to "running" after the outcome.
func (r *replayRun) wait() tea.Msg {
	select {
	case d := <-r.done:
		return d
	default:
	}
	select {
	case d := <-r.done:
		return d
	case p := <-r.progress:
		return p
	}
}

// send hands the replay a command without blocking the screen.
func (r *replayRun) send(c replay.Command) bool {
	select {
	case r.ctl <- c:
		return true
	default:
		return false
	}
}

// startRun runs plan once the operator confirmed it.
func (s *replayScreen) startRun(plan replay.Plan) tea.Cmd {
	c := s.c
	if err := c.actionsReady("replay"); err != nil {
		c.setErr(err)
		return nil
	}
	if c.opts.Actions.OpenReplay == nil {
		c.setErr(errors.New("replay is off: this broker connection cannot publish"))
		return nil
	}
	o := plan.Options
	gate := approval.Plan{Selection: s.what, Rate: o.Rate, Canary: o.Canary, CanaryRate: o.CanaryRate, Observe: o.Observe.String(), Baseline: o.Baseline.String(), MaxBacklog: o.MaxBacklog}
	if o.To != nil {
		gate.To = o.To.String()
	}
	if cmd, ok := c.proposeInstead(approval.GateReplay, target{queue: plan.Queue, ids: plan.IDs(), what: s.what}, s.flow.groups.Inspection(), gate); ok {
		return cmd
	}
	run, ctx := newReplayRun(c.base, c.nextID())
	run.revise = c.opts.Revisions
	s.run = run
	s.Start()
	open, hold, check := c.opts.Actions.OpenReplay, plan.HoldLimit(s.flow.readLimit()), c.opts.Actions.CheckPlan
	return run.start(ctx, c.eng, func(ctx context.Context, id, queue string, acceptCost bool) (replay.Port, error) {
		if check != nil {
			if err := check(ctx, plan); err != nil {
				return nil, err
			}
		}
		return open(ctx, id, queue, acceptCost, hold)
	}, plan, s.flow.acceptCost(plan.Queue), c.recorder())
}

// abort asks the running replay to stop, and with quit to leave dlqt once
// it did; with no replay running, quit leaves at once.
func (s *replayScreen) abort(quit bool) tea.Cmd {
	if s.run == nil {
		if quit {
			return s.c.quit()
		}
		return nil
	}
	s.quitAfter = quit
	s.command(replay.Abort, "abort")
	return nil
}

func (s *replayScreen) onProgress(msg replayProgressMsg) tea.Cmd {
	if s.run == nil || msg.id != s.run.id {
		return nil // a replay that already ended
	}
	s.SetProgress(msg.p)
	return s.run.next()
}

func (s *replayScreen) onDone(msg replayDoneMsg) tea.Cmd {
	if s.run == nil || msg.id != s.run.id {
		return nil
	}
	s.run.cancel()
	s.run = nil
	s.SetResult(msg.res, msg.err)
	if msg.err != nil {
		s.c.setErr(fmt.Errorf("replay %s: %w", msg.res.ID, msg.err))
	}
	if s.quitAfter {
		return s.c.quit()
	}
	cmds := []tea.Cmd{s.loadInterrupted()} // a resumed replay leaves the banner
	if msg.err == nil {                    // the list's read would clear the error line
		s.flow.noteChange(s.Plan().Queue)
		cmds = append(cmds, s.queues.refresh()) // the depths it changed
	}
	return tea.Batch(cmds...)
}

// cancel aborts the replay in flight (unpublished sources are requeued)
// without waiting for it.
func (s *replayScreen) cancel() {
	if s.run != nil {
		s.run.cancel()
	}
}

// stop cancels the replay and waits a bounded time for it to put
// everything back.
func (s *replayScreen) stop() {
	if s.run == nil {
		return
	}
	s.run.cancel()
	select {
	case <-s.run.ended:
	case <-time.After(15 * time.Second):
	}
	s.run = nil
}
