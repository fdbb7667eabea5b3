package ui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/views"
)

// journalScreen lists the journal's entries, newest first, with the chain
// check; it owns the read of the journal.
type journalScreen struct {
	*views.Journal
	returnTo
	plainFilter
	c   *programContext
	req int // journal read awaited, 0 when none
}

// journalMsg answers a read of the whole journal with its chain check.
type journalMsg struct {
	id        int
	entries   []journal.Entry
	verifyErr error
	err       error
}

func (journalMsg) owner() screenID { return screenJournal }

func journalCmd(j EntryReader, id int) tea.Cmd {
	return func() tea.Msg {
		es, err := j.Entries()
		if err != nil {
			return journalMsg{id: id, err: err}
		}
		return journalMsg{id: id, entries: es, verifyErr: journal.VerifyChain(es)}
	}
}

func (s *journalScreen) list() *views.Table { return s.Table() }

// open shows the journal from any screen; back returns there.
func (s *journalScreen) open() tea.Cmd {
	if err := s.c.noJournal(); err != nil {
		s.c.setErr(fmt.Errorf("journal: %w", err))
		return nil
	}
	s.visit(s.c, screenJournal)
	return s.reload()
}

func (s *journalScreen) reload() tea.Cmd {
	s.SetLoading(s.c.opts.Journal.Path())
	s.req = s.c.nextID()
	return journalCmd(s.c.opts.Journal, s.req)
}

func (s *journalScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	if r, ok := msg.(journalMsg); ok {
		s.onJournal(r)
		return s, nil
	}
	if r, ok := msg.(journalExportMsg); ok {
		return s, s.onExport(r)
	}
	return s, listUpdate(s, &s.c.Keys, msg)
}

// key handles the screen's own keys, those the list left.
func (s *journalScreen) key(k tea.KeyPressMsg) tea.Cmd {
	keys := s.c.Keys
	switch {
	case key.Matches(k, keys.Open):
		s.Open()
	case key.Matches(k, keys.Back) && s.Detail():
		s.Close()
	case key.Matches(k, keys.Back):
		s.leave(s.c)
	case key.Matches(k, keys.Refresh):
		return s.reload()
	case key.Matches(k, keys.ExportJournal) && !s.Detail():
		return exportJournalCmd(s.c)
	default:
		return s.Journal.Update(k)
	}
	return nil
}

func (s *journalScreen) onJournal(msg journalMsg) {
	if msg.id != s.req {
		return
	}
	s.req = 0
	if msg.err != nil {
		s.c.setErr(fmt.Errorf("reading the journal: %w", msg.err))
		return
	}
	s.SetEntries(journalRows(msg.entries), msg.verifyErr)
}

// journalRows are the journal's entries as the journal screen shows them.
func journalRows(es []journal.Entry) []views.JournalEntry {
	rows := make([]views.JournalEntry, len(es))
	for i, e := range es {
		rows[i] = views.JournalEntry{
			Seq: e.Seq, Time: e.Time, Actor: e.Actor, Host: e.Host, Action: string(e.Action), Vhost: e.Vhost,
			Queue: e.Queue, MessageIDs: e.MessageIDs, Reason: e.Reason, Details: e.Details,
			PrevHash: e.PrevHash, Hash: e.Hash,
		}
	}
	return rows
}
