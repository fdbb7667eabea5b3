package ui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
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

// replayRun is one RunReplay in flight. Like a browse, its progress comes
// through a one-slot channel that keeps only the latest report, so a slow
// screen never slows the replay; keys reach it through ctl.
type replayRun struct {
	id       int
	cancel   context.CancelFunc
	ctl      chan replay.Command
	progress chan replayProgressMsg
	done     chan replayDoneMsg
	ended    chan struct{} // closed when replay.Run returned and the port closed
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
			port, err := open(ctx, plan.ID, plan.Queue, acceptCost)
			if err != nil {
				r.done <- replayDoneMsg{id: r.id, res: replay.Result{ID: plan.ID}, err: err}
				return
			}
			res, err := e.runReplay(ctx, plan, port, rec, r.ctl, r.report)
			if cerr := port.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("closing the replay's connections: %w", cerr)
			}
			r.done <- replayDoneMsg{id: r.id, res: res, err: err}
		}()
		return r.wait()
	}
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

// stop cancels the replay (it aborts: unpublished sources are requeued) and
// waits a bounded time for it to put everything back.
func (r *replayRun) stop() {
	r.cancel()
	select {
	case <-r.ended:
	case <-time.After(15 * time.Second):
	}
}

// startReplay plans a replay of the target and shows the dry run.
func (m *Model) startReplay() tea.Cmd {
	tg, ok := m.actionTarget("replay")
	if !ok {
		return nil
	}
	m.replaySel, m.replayWhat = triage.Selection{IDs: tg.ids}, tg.what
	m.replayOpts = replay.Options{Allow: m.opts.Actions.Allow}
	if err := m.replan(); err != nil {
		m.setErr(err)
		return nil
	}
	m.replayFrom = m.screen
	m.screen = screenReplay
	return nil
}

// replan runs the dry run again with the current settings.
func (m *Model) replan() error {
	insp := m.groups.Inspection()
	if insp == nil {
		return errors.New("replay: nothing is read yet")
	}
	plan, err := replay.NewPlan(*insp, m.replaySel, m.replayOpts)
	if err != nil {
		return fmt.Errorf("replay plan: %w", err)
	}
	if m.fixedReplayID != "" {
		plan.ID = m.fixedReplayID
	}
	m.replay.SetPlan(plan, m.replayWhat, false)
	return nil
}

// replayKey handles the keys of the replay screen; false lets the common
// keys (help, journal, quit) through.
func (m *Model) replayKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	keys := m.ctx.Keys
	if !m.replay.Started() {
		switch {
		case key.Matches(k, keys.Open):
			if err := m.replay.Plan().Runnable(); err != nil {
				m.setErr(err)
				return nil, true
			}
			m.dialog = startConfirm{plan: m.replay.Plan()}
		case key.Matches(k, keys.Destination):
			m.edit(fieldDestination)
		case key.Matches(k, keys.Canary):
			m.edit(fieldCanary)
		case key.Matches(k, keys.Observe):
			m.edit(fieldObserve)
		case key.Matches(k, keys.Rate):
			m.edit(fieldRate)
		case key.Matches(k, keys.Back):
			m.screen = m.replayFrom
		default:
			return nil, false
		}
		return nil, true
	}
	if !m.replay.Running() {
		if key.Matches(k, keys.Back) {
			m.screen = m.replayFrom
			if m.screen == screenQueues || m.groups.Queue() != m.replay.Plan().Queue {
				return m.refreshQueues(), true
			}
			return m.startBrowse(m.groups.Queue(), m.acceptCost(m.groups.Queue())), true
		}
		return nil, false
	}
	switch {
	case key.Matches(k, keys.RampUp):
		m.command(replay.RampUp, "ramp up")
	case key.Matches(k, keys.Pause):
		if m.replay.Phase() == replay.PhasePaused {
			m.command(replay.Resume, "resume")
		} else {
			m.command(replay.Pause, "pause")
		}
	case key.Matches(k, keys.Abort), key.Matches(k, keys.Back):
		m.dialog = abortConfirm{}
	case key.Matches(k, keys.Quit):
		m.dialog = abortConfirm{quit: true}
	default:
		return nil, false
	}
	return nil, true
}

func (m *Model) command(c replay.Command, what string) {
	if m.run == nil || !m.run.send(c) {
		m.setErr(fmt.Errorf("%s not sent: the replay is busy, press again", what))
		return
	}
	m.done = what + " sent"
}

func (m *Model) edit(f planField) {
	if m.replay.Plan().Prior != nil {
		m.setErr(errors.New("a resumed replay keeps its plan from the journal"))
		return
	}
	o := m.replay.Plan().Options
	value := ""
	switch f {
	case fieldDestination:
		if m.replayOpts.To != nil {
			value = m.replayOpts.To.String()
		}
	case fieldCanary:
		value = strconv.Itoa(o.Canary)
	case fieldObserve:
		value = o.Observe.String()
	case fieldRate:
		value = strconv.FormatFloat(o.Rate, 'f', -1, 64)
	}
	m.dialog = newEditPrompt(m.ctx, f, value, m.width)
}

func (m *Model) editKey(d editPrompt, k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc":
		m.dialog = nil
		return nil
	case "enter":
		opts := m.replayOpts
		if err := applyField(&opts, d.field, strings.TrimSpace(d.input.Value())); err != nil {
			d.refused = err.Error()
			m.dialog = d
			return nil
		}
		old := m.replayOpts
		m.replayOpts = opts
		if err := m.replan(); err != nil {
			m.replayOpts = old
			d.refused = err.Error()
			m.dialog = d
			return nil
		}
		m.dialog = nil
		return nil
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(k)
	d.refused = ""
	m.dialog = d
	return cmd
}

func applyField(o *replay.Options, f planField, v string) error {
	switch f {
	case fieldDestination:
		if v == "" {
			o.To = nil
			return nil
		}
		r, err := triage.ParseRoute(v)
		if err != nil {
			return err
		}
		o.To = &r
	case fieldCanary:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("canary size %q: want a whole number, at least 1", v)
		}
		o.Canary = n
	case fieldObserve:
		d, err := time.ParseDuration(v)
		if n, nerr := strconv.Atoi(v); nerr == nil { // plain seconds
			d, err = time.Duration(n)*time.Second, nil
		}
		if err != nil || d <= 0 {
			return fmt.Errorf("observe %q: want a duration such as 30s or 2m", v)
		}
		o.Observe = d
	case fieldRate:
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r <= 0 {
			return fmt.Errorf("rate %q: want messages per second, above 0", v)
		}
		o.Rate = r
	}
	return nil
}

// startKey answers the start confirmation.
func (m *Model) startKey(d startConfirm, k tea.KeyPressMsg) tea.Cmd {
	m.dialog = nil
	if !key.Matches(k, m.ctx.Keys.Confirm) {
		return nil
	}
	if err := m.actionsReady("replay"); err != nil {
		m.setErr(err)
		return nil
	}
	if m.opts.Actions.OpenReplay == nil {
		m.setErr(errors.New("replay is off: this broker connection cannot publish"))
		return nil
	}
	run, ctx := newReplayRun(m.base, m.nextID())
	m.run = run
	m.replay.Start()
	rec := journal.NewRecorder(m.opts.Journal, m.opts.Actor, m.opts.Host)
	return run.start(ctx, m.eng, m.opts.Actions.OpenReplay, d.plan, m.acceptCost(d.plan.Queue), rec)
}

func (m *Model) abortKey(d abortConfirm, k tea.KeyPressMsg) tea.Cmd {
	m.dialog = nil
	if !key.Matches(k, m.ctx.Keys.Confirm) {
		return nil
	}
	if m.run == nil {
		if d.quit {
			return m.quit()
		}
		return nil
	}
	m.quitAfterReplay = d.quit
	m.command(replay.Abort, "abort")
	return nil
}

func (m *Model) onReplayProgress(msg replayProgressMsg) tea.Cmd {
	if m.run == nil || msg.id != m.run.id {
		return nil // a replay that already ended
	}
	m.replay.SetProgress(msg.p)
	return m.run.next()
}

func (m *Model) onReplayDone(msg replayDoneMsg) tea.Cmd {
	if m.run == nil || msg.id != m.run.id {
		return nil
	}
	m.run.cancel()
	m.run = nil
	m.replay.SetResult(msg.res, msg.err)
	if msg.err != nil {
		m.setErr(fmt.Errorf("replay %s: %w", msg.res.ID, msg.err))
	}
	if m.quitAfterReplay {
		return m.quit()
	}
	return m.loadInterrupted() // a resumed replay leaves the banner
}

func (m *Model) stopReplay() {
	if m.run != nil {
		m.run.stop()
		m.run = nil
	}
}
