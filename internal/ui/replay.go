package ui

import (
	"errors"
	"fmt"
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/views"
)

// replayScreen is the replay flow: the dry run of a plan the operator may
// edit, then the gauge of the running replay, then its outcome. It owns the
// replay in flight and the interrupted replays the journal tells of.
type replayScreen struct {
	*views.Replay
	returnTo
	c      *programContext
	flow   *browseFlow
	queues *queuesScreen // read again when the outcome is left for it

	run       *replayRun // the replay in flight, nil when none
	sel       triage.Selection
	what      string
	opts      replay.Options
	quitAfter bool   // quit once the aborted replay put everything back
	fixedID   string // tests: a plan id that does not change

	interrupted    []replay.State
	interruptedReq int // interrupted replays awaited
}

func (s *replayScreen) inFlight() bool { return s.run != nil }

func (s *replayScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	switch msg := msg.(type) {
	case replayProgressMsg:
		return s, s.onProgress(msg)
	case replayDoneMsg:
		return s, s.onDone(msg)
	case interruptedMsg:
		s.onInterrupted(msg)
	case tea.KeyPressMsg:
		switch {
		case !s.Started():
			s.dryRunKey(msg)
		case s.Running():
			s.runningKey(msg)
		default:
			return s, s.outcomeKey(msg)
		}
	}
	return s, nil
}

// plan plans a replay of tg and shows the dry run.
func (s *replayScreen) plan(tg target) {
	s.sel, s.what = triage.Selection{IDs: tg.ids}, tg.what
	s.opts = replay.Options{Allow: s.c.opts.Actions.Allow}
	if err := s.replan(); err != nil {
		s.c.setErr(err)
		return
	}
	s.visit(s.c, screenReplay)
}

// replan runs the dry run again with the current settings.
func (s *replayScreen) replan() error {
	insp := s.flow.groups.Inspection()
	if insp == nil {
		return errors.New("replay: nothing is read yet")
	}
	plan, err := replay.NewPlan(*insp, s.sel, s.opts)
	if err != nil {
		return fmt.Errorf("replay plan: %w", err)
	}
	if s.fixedID != "" {
		plan.ID = s.fixedID
	}
	s.SetPlan(plan, s.what, false)
	return nil
}

// dryRunKey: start (asks first), change a setting, or go back.
func (s *replayScreen) dryRunKey(k tea.KeyPressMsg) {
	keys := s.c.Keys
	switch {
	case key.Matches(k, keys.Open):
		if err := s.Plan().Runnable(); err != nil {
			s.c.setErr(err)
			return
		}
		s.c.dialog = &startConfirm{replay: s, plan: s.Plan()}
	case key.Matches(k, keys.Destination):
		s.edit(fieldDestination)
	case key.Matches(k, keys.Canary):
		s.edit(fieldCanary)
	case key.Matches(k, keys.Observe):
		s.edit(fieldObserve)
	case key.Matches(k, keys.Rate):
		s.edit(fieldRate)
	case key.Matches(k, keys.Back):
		s.leave(s.c)
	}
}

// runningKey steers the running replay; leaving it asks to abort.
func (s *replayScreen) runningKey(k tea.KeyPressMsg) {
	keys := s.c.Keys
	switch {
	case key.Matches(k, keys.RampUp):
		s.command(replay.RampUp, "ramp up")
	case key.Matches(k, keys.Pause):
		if s.Phase() == replay.PhasePaused {
			s.command(replay.Resume, "resume")
		} else {
			s.command(replay.Pause, "pause")
		}
	case key.Matches(k, keys.Abort), key.Matches(k, keys.Back):
		s.c.dialog = &abortConfirm{replay: s}
	}
}

// outcomeKey: back, and the screen gone back to is read again.
func (s *replayScreen) outcomeKey(k tea.KeyPressMsg) tea.Cmd {
	if !key.Matches(k, s.c.Keys.Back) {
		return nil
	}
	s.leave(s.c)
	queue := s.flow.groups.Queue()
	if s.c.focus == screenQueues || queue != s.Plan().Queue {
		return s.queues.refresh()
	}
	return s.flow.start(queue, s.flow.acceptCost(queue))
}

func (s *replayScreen) command(cmd replay.Command, what string) {
	if s.run == nil || !s.run.send(cmd) {
		s.c.setErr(fmt.Errorf("%s not sent: the replay is busy, press again", what))
		return
	}
	s.c.done = what + " sent"
}

// edit asks for a new value of one dry-run setting.
func (s *replayScreen) edit(f planField) {
	if s.Plan().Prior != nil {
		s.c.setErr(errors.New("a resumed replay keeps its plan from the journal"))
		return
	}
	o := s.Plan().Options
	value := ""
	switch f {
	case fieldDestination:
		if s.opts.To != nil {
			value = s.opts.To.String()
		}
	case fieldCanary:
		value = strconv.Itoa(o.Canary)
	case fieldObserve:
		value = o.Observe.String()
	case fieldRate:
		value = strconv.FormatFloat(o.Rate, 'f', -1, 64)
	}
	s.c.dialog = newEditPrompt(s, f, value)
}

// apply puts an edited setting in force and plans again; a value the plan
// refuses leaves the settings as they were.
func (s *replayScreen) apply(f planField, value string) error {
	opts := s.opts
	if err := applyField(&opts, f, value); err != nil {
		return err
	}
	old := s.opts
	s.opts = opts
	if err := s.replan(); err != nil {
		s.opts = old
		return err
	}
	return nil
}
