package ui

import (
	"errors"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/views"
)

// journalMsg answers a read of the whole journal with its chain check.
type journalMsg struct {
	id        int
	entries   []journal.Entry
	verifyErr error
	err       error
}

func journalCmd(j *journal.Journal, id int) tea.Cmd {
	return func() tea.Msg {
		es, err := j.Entries()
		if err != nil {
			return journalMsg{id: id, err: err}
		}
		return journalMsg{id: id, entries: es, verifyErr: journal.VerifyChain(es)}
	}
}

// interruptedMsg lists the replays the journal says never finished.
type interruptedMsg struct {
	id     int
	states []journal.ReplayState
	err    error
}

func interruptedCmd(j *journal.Journal, id int) tea.Cmd {
	return func() tea.Msg {
		st, err := j.InterruptedReplays()
		return interruptedMsg{id: id, states: st, err: err}
	}
}

func (m *Model) openJournal() tea.Cmd {
	if m.opts.Journal == nil {
		err := m.opts.JournalErr
		if err == nil {
			err = errors.New("no journal is open")
		}
		m.setErr(fmt.Errorf("journal: %w", err))
		return nil
	}
	if m.screen != screenJournal {
		m.journalFrom = m.screen
	}
	m.screen = screenJournal
	return m.reloadJournal()
}

func (m *Model) reloadJournal() tea.Cmd {
	m.journalV.SetLoading(m.opts.Journal.Path())
	m.journalReq = m.nextID()
	return journalCmd(m.opts.Journal, m.journalReq)
}

func (m *Model) onJournal(msg journalMsg) tea.Cmd {
	if msg.id != m.journalReq {
		return nil
	}
	m.journalReq = 0
	if msg.err != nil {
		m.setErr(fmt.Errorf("reading the journal: %w", msg.err))
		return nil
	}
	m.journalV.SetEntries(journalRows(msg.entries), msg.verifyErr)
	return nil
}

// journalRows are the journal's entries as the journal screen shows them.
func journalRows(es []journal.Entry) []views.JournalEntry {
	rows := make([]views.JournalEntry, len(es))
	for i, e := range es {
		rows[i] = views.JournalEntry{
			Seq: e.Seq, Time: e.Time, Actor: e.Actor, Host: e.Host, Action: e.Action, Vhost: e.Vhost,
			Queue: e.Queue, MessageIDs: e.MessageIDs, Reason: e.Reason, Details: e.Details,
			PrevHash: e.PrevHash, Hash: e.Hash,
		}
	}
	return rows
}

// journalKey handles the journal screen's own keys.
func (m *Model) journalKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	keys := m.ctx.Keys
	switch {
	case key.Matches(k, keys.Open):
		m.journalV.Open()
	case key.Matches(k, keys.Back):
		if m.journalV.Detail() {
			m.journalV.Close()
			return nil, true
		}
		if t := m.journalV.Table(); t != nil && t.FilterValue() != "" {
			t.ClearFilter()
			return nil, true
		}
		m.screen = m.journalFrom
	case key.Matches(k, keys.Refresh):
		return m.reloadJournal(), true
	default:
		return nil, false
	}
	return nil, true
}

func (m *Model) loadInterrupted() tea.Cmd {
	if m.opts.Journal == nil {
		return nil
	}
	m.interruptedReq = m.nextID()
	return interruptedCmd(m.opts.Journal, m.interruptedReq)
}

func (m *Model) onInterrupted(msg interruptedMsg) tea.Cmd {
	if msg.id != m.interruptedReq {
		return nil
	}
	m.interruptedReq = 0
	if msg.err != nil {
		m.setErr(fmt.Errorf("reading interrupted replays: %w", msg.err))
		return nil
	}
	m.interrupted = msg.states
	return nil
}

// banner tells of the newest interrupted replay and how to resume it, in
// two lines so the shell command is never broken at its hyphens.
func (m *Model) banner() []string {
	n := len(m.interrupted)
	if n == 0 || m.run != nil {
		return nil
	}
	st := m.interrupted[n-1]
	c := st.Counts()
	left := len(st.Plan.Items) - c[triage.OutcomeConfirmed] - c[triage.OutcomeFailedAgain] - c[triage.OutcomeReturned]
	first := fmt.Sprintf("INTERRUPTED REPLAY %s of %s (%d of %d not done): %s resumes it here",
		st.ID, triage.SanitizeLine(st.Queue), left, len(st.Plan.Items), m.ctx.Keys.ResumeReplay.Help().Key)
	if n > 1 {
		first += fmt.Sprintf(" (%d more interrupted)", n-1)
	}
	return []string{first, "or from a shell: dlqt replay --resume " + st.ID}
}

// resumeReplay shows the newest interrupted replay's resume plan as a dry
// run; starting it finishes the replay.
func (m *Model) resumeReplay() tea.Cmd {
	if len(m.interrupted) == 0 {
		m.setErr(errors.New("no interrupted replay in the journal"))
		return nil
	}
	if err := m.actionsReady("resuming a replay"); err != nil {
		m.setErr(err)
		return nil
	}
	st := m.interrupted[len(m.interrupted)-1]
	if m.opts.Vhost != "" && st.Vhost != m.opts.Vhost {
		m.setErr(fmt.Errorf("replay %s ran in vhost %q, this is %q: run dlqt replay --resume %s",
			st.ID, st.Vhost, m.opts.Vhost, st.ID))
		return nil
	}
	m.replay.SetPlan(st.ResumePlan(), "interrupted replay "+st.ID, true)
	m.replayFrom = m.screen
	m.screen = screenReplay
	return nil
}
