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
	chosen    *triage.Inspection // the read, its selected messages whole (a plan routes by their headers)
	chosenReq int                // the read-back awaited, 0 when none
	what      string
	opts      replay.Options
	quitAfter bool   // quit once the aborted replay put everything back
	fixedID   string // tests: a plan id that does not change

	interrupted    []replay.State
	interruptedReq int // interrupted replays awaited

	// revs are the approved revisions of the plan's edited messages, read
	// off the Update loop when the dry run opens, so a changed setting
	// keeps showing them; the run reads them again before it holds.
	revs    map[string]replay.Revision
	revsReq int
}

// revisionsMsg answers the read of the dry run's revisions.
type revisionsMsg struct {
	id   int
	revs map[string]replay.Revision
	err  error
}

func (revisionsMsg) owner() screenID { return screenReplay }

// loadRevisions reads the approved revisions of the plan's messages.
func (s *replayScreen) loadRevisions() tea.Cmd {
	read := s.c.opts.Revisions
	if read == nil {
		return nil
	}
	s.revsReq = s.c.nextID()
	plan, id := s.Plan(), s.revsReq
	plan.Items = plan.Items.Clone()
	return func() tea.Msg {
		err := read(&plan)
		revs := map[string]replay.Revision{}
		for _, it := range plan.Items.All() {
			if it.Revision != nil {
				revs[it.ID] = *it.Revision
			}
		}
		return revisionsMsg{id: id, revs: revs, err: err}
	}
}

func (s *replayScreen) onRevisions(msg revisionsMsg) {
	if msg.id != s.revsReq {
		return
	}
	s.revsReq = 0
	if msg.err != nil {
		s.c.setErr(fmt.Errorf("replay: reading the revisions of edited messages: %w", msg.err))
		return
	}
	s.revs = msg.revs
	if !s.Started() && len(s.revs) > 0 {
		plan := s.Plan()
		plan.UseRevisions(s.revs)
		s.SetPlan(plan, s.what, false)
	}
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
	case revisionsMsg:
		s.onRevisions(msg)
	case chosenMsg:
		return s, s.onChosen(msg)
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

// chosenMsg answers the read-back of a replay's chosen messages.
type chosenMsg struct {
	id     int
	chosen *triage.Inspection
	err    error
}

func (chosenMsg) owner() screenID { return screenReplay }

// plan plans a replay of tg: it reads the chosen messages back from the
// read's spill file (off Update: a group may be large), then shows the dry
// run and reads the revisions of its edited messages.
func (s *replayScreen) plan(tg target) tea.Cmd {
	insp := s.flow.groups.Inspection()
	if insp == nil {
		s.c.setErr(errors.New("replay: nothing is read yet"))
		return nil
	}
	s.sel, s.what = triage.Selection{IDs: tg.ids, Group: tg.group}, tg.what
	s.opts = replay.Options{Allow: s.c.opts.Actions.Allow}
	s.revs = nil
	s.chosenReq = s.c.nextID()
	s.c.busy = "reading " + views.Plural(len(tg.ids), "chosen message") + " back for the replay plan…"
	id, read := s.chosenReq, *insp
	return func() tea.Msg {
		chosen, err := chosenOf(read, tg.ids)
		return chosenMsg{id: id, chosen: chosen, err: err}
	}
}

func (s *replayScreen) onChosen(msg chosenMsg) tea.Cmd {
	if msg.id != s.chosenReq {
		return nil
	}
	s.chosenReq = 0
	s.c.busy = ""
	if msg.err != nil {
		s.c.setErr(fmt.Errorf("replay plan: %w", msg.err))
		return nil
	}
	s.chosen = msg.chosen
	if err := s.replan(); err != nil {
		s.c.setErr(err)
		return nil
	}
	s.visit(s.c, screenReplay)
	return s.loadRevisions()
}

// replan runs the dry run again with the current settings.
func (s *replayScreen) replan() error {
	insp := s.chosen
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
	for i, t := range plan.Sample { // the few the dry run shows, with their payload
		if t.Indexed() {
			if whole, err := t.Whole(); err == nil {
				plan.Sample[i] = replay.SampleOf(whole)
			}
		}
	}
	// IndexBudget is --memory-budget when the user gave one (cli indexBudget).
	plan.CheckMemory(*insp, s.c.opts.MemoryBudget, s.c.opts.IndexBudget > 0)
	plan.UseRevisions(s.revs)
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
