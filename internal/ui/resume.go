package ui

import (
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// interruptedMsg lists the replays the journal says never finished.
type interruptedMsg struct {
	id     int
	states []replay.State
	err    error
}

func (interruptedMsg) owner() screenID { return screenReplay }

func interruptedCmd(j ReplayLog, id int) tea.Cmd {
	return func() tea.Msg {
		st, err := replay.Interrupted(j)
		return interruptedMsg{id: id, states: st, err: err}
	}
}

func (s *replayScreen) loadInterrupted() tea.Cmd {
	if s.c.opts.Journal == nil {
		return nil
	}
	s.interruptedReq = s.c.nextID()
	return interruptedCmd(s.c.opts.Journal, s.interruptedReq)
}

func (s *replayScreen) onInterrupted(msg interruptedMsg) {
	if msg.id != s.interruptedReq {
		return
	}
	s.interruptedReq = 0
	if msg.err != nil {
		s.c.setErr(fmt.Errorf("reading interrupted replays: %w", msg.err))
		return
	}
	s.interrupted = msg.states
}

// banner tells of the newest interrupted replay and how to resume it, in
// two lines so the shell command is never broken at its hyphens.
func (s *replayScreen) banner() []string {
	n := len(s.interrupted)
	if n == 0 || s.run != nil {
		return nil
	}
	st := s.interrupted[n-1]
	first := fmt.Sprintf("INTERRUPTED REPLAY %s of %s: %s resumes it here (%s)",
		st.ID, sanitize.Line(st.Queue), s.c.Keys.ResumeReplay.Help().Key, leftToDo(st))
	if n > 1 {
		first += fmt.Sprintf(" (%d more interrupted)", n-1)
	}
	return []string{first, "or from a shell: dlqt replay --resume " + st.ID}
}

// leftToDo says what a resume of st still has to do: publish what has no
// outcome yet, ack what was confirmed. A replay killed after its last
// confirm has nothing to publish but is not done either.
func leftToDo(st replay.State) string {
	c := st.Counts()
	total := st.Plan.Items.Len()
	publish := total - c[replay.OutcomeConfirmed] - c[replay.OutcomeResolved] - c[replay.OutcomeFailedAgain] - c[replay.OutcomeReturned]
	var parts []string
	if publish > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d left to publish", publish, total))
	}
	if n := c[replay.OutcomeConfirmed]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d confirmed to ack", n))
	}
	if len(parts) == 0 {
		return "nothing left to send, not closed"
	}
	return strings.Join(parts, ", ")
}

// resume shows the newest interrupted replay's resume plan as a dry run;
// starting it finishes the replay.
func (s *replayScreen) resume() {
	c := s.c
	if len(s.interrupted) == 0 {
		c.setErr(errors.New("no interrupted replay in the journal"))
		return
	}
	if err := c.actionsReady("resuming a replay"); err != nil {
		c.setErr(err)
		return
	}
	st := s.interrupted[len(s.interrupted)-1]
	if c.opts.Vhost != "" && st.Vhost != c.opts.Vhost {
		c.setErr(fmt.Errorf("replay %s ran in vhost %q, this is %q: run dlqt replay --resume %s",
			st.ID, st.Vhost, c.opts.Vhost, st.ID))
		return
	}
	s.SetPlan(st.ResumePlan(), "interrupted replay "+st.ID, true)
	s.visit(c, screenReplay)
}
