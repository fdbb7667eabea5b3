package ui

import (
	"errors"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// journalScreen lists the journal's entries, newest first, a page at a
// time; it owns the reads of the journal and the whole chain check the TUI
// runs after its first screen (journalcheck.go).
type journalScreen struct {
	*views.Journal
	returnTo
	plainFilter
	c      *programContext
	req    int           // page read awaited, 0 when none
	oldest journal.Entry // the oldest entry read, which the next page links to
	// pageErr is what the pages read so far failed of their own check
	// (each page within itself, and linked to the one after it).
	pageErr error
	stream  string // the audit stream shown, on the team's trail
}

// journalPage is how many entries one read of the journal screen takes:
// several screens, one cheap seek.
const journalPage = 256

// journalMsg answers a read of one page of the journal (older: the entries
// before those read, else the newest) with the page's own check.
type journalMsg struct {
	id        int
	older     bool
	entries   []journal.Entry // journal order
	last      uint64          // the journal's newest seq: how many entries it holds
	verifyErr error
	err       error
}

func (journalMsg) owner() screenID { return screenJournal }

// journalCmd reads the page before seq before (0: the newest). next is the
// oldest entry already read, which the page must link to; nil for none.
func journalCmd(j EntryReader, id int, before uint64, next *journal.Entry) tea.Cmd {
	return func() tea.Msg {
		es, last, err := j.Page(before, journalPage)
		if err != nil {
			return journalMsg{id: id, older: before != 0, err: err}
		}
		verifyErr := journal.VerifyRun(es)
		if verifyErr == nil && next != nil && len(es) > 0 {
			verifyErr = journal.VerifyRun([]journal.Entry{es[len(es)-1], *next})
		}
		return journalMsg{id: id, older: before != 0, entries: es, last: last, verifyErr: verifyErr}
	}
}

func (s *journalScreen) list() *views.Table { return s.Table() }

// open shows the journal from any screen; back returns there. It reads
// while the whole check runs: the screen says how far that got.
func (s *journalScreen) open() tea.Cmd {
	if s.c.opts.Journal == nil {
		s.c.setErr(fmt.Errorf("journal: %w", s.c.noJournal()))
		return nil
	}
	s.visit(s.c, screenJournal)
	return s.reload()
}

func (s *journalScreen) reload() tea.Cmd {
	if s.Team() {
		return s.readTeam()
	}
	s.SetLoading(s.c.opts.Journal.Path())
	s.req, s.pageErr = s.c.nextID(), nil
	return journalCmd(s.c.opts.Journal, s.req, 0, nil)
}

// readOlder reads the page before the oldest entry read, once the
// selection nears it.
func (s *journalScreen) readOlder() tea.Cmd {
	if s.req != 0 || !s.WantsOlder() || s.pageErr != nil || s.c.opts.Journal == nil {
		return nil
	}
	s.req = s.c.nextID()
	oldest := s.oldest
	return journalCmd(s.c.opts.Journal, s.req, oldest.Seq, &oldest)
}

func (s *journalScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	switch r := msg.(type) {
	case journalMsg:
		s.onJournal(r)
		return s, s.readOlder()
	case journalCheckMsg:
		return s, s.onCheck(r)
	case teamTrailMsg:
		s.onTeam(r)
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
	case key.Matches(k, keys.ExportJournal) && !s.Detail() && s.Team():
		return exportTeamTrailCmd(s.c, s.stream)
	case key.Matches(k, keys.ExportJournal) && !s.Detail():
		return exportJournalCmd(s.c)
	case key.Matches(k, keys.TeamTrail) && !s.Detail():
		if s.Team() { // back to this journal
			s.SetLoading(s.c.opts.Journal.Path())
			return s.reload()
		}
		if s.c.opts.TeamTrail == nil {
			s.c.setErr(errors.New("no audit stream is configured (audit_stream in the config, or DLQT_AUDIT_STREAM): there is no team trail to show"))
			return nil
		}
		return s.readTeam()
	default:
		return tea.Batch(s.Journal.Update(k), s.readOlder())
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
	if msg.verifyErr != nil {
		s.pageErr = msg.verifyErr
	}
	if len(msg.entries) > 0 {
		s.oldest = msg.entries[0]
	}
	if msg.older {
		s.AddOlder(journalRows(msg.entries))
	} else {
		s.SetPage(journalRows(msg.entries), int(msg.last))
	}
	s.showVerify()
}

// teamTrailMsg answers a read of the team's audit stream.
type teamTrailMsg struct {
	id    int
	trail TeamTrail
	err   error
}

func (teamTrailMsg) owner() screenID { return screenJournal }

// readTeam reads the team's trail, off Update: the stream is on the broker.
func (s *journalScreen) readTeam() tea.Cmd {
	s.req = s.c.nextID()
	id, read := s.req, s.c.opts.TeamTrail
	s.c.busy = "reading the team's trail from the audit stream…"
	return func() tea.Msg {
		t, err := read()
		return teamTrailMsg{id: id, trail: t, err: err}
	}
}

func (s *journalScreen) onTeam(msg teamTrailMsg) {
	if msg.id != s.req {
		return
	}
	s.req, s.c.busy = 0, ""
	if msg.err != nil {
		s.c.setErr(fmt.Errorf("the team's trail: %w", msg.err))
		return
	}
	rows := make([]views.JournalEntry, len(msg.trail.Entries))
	for i, e := range msg.trail.Entries {
		rows[i] = journalRow(e.Entry)
		rows[i].Writer, rows[i].Offset, rows[i].Void = e.Writer, e.Offset, e.Void
	}
	s.stream = msg.trail.Stream
	s.SetTeam(msg.trail.Stream, rows, sanitize.Line(msg.trail.Summary), msg.trail.Broken)
}

// showVerify puts how the chain stands at the top of the screen: a page
// that fails its own check, else the whole check (running, failed, passed).
func (s *journalScreen) showVerify() {
	if s.Team() {
		return // the team's trail has its own line (onTeam)
	}
	if s.pageErr != nil {
		s.SetVerify("CHAIN BROKEN: "+sanitize.Line(s.pageErr.Error()), true)
		return
	}
	text, broken := s.c.check.verifyLine()
	s.SetVerify(text, broken)
}

// journalRows are the journal's entries as the journal screen shows them.
func journalRows(es []journal.Entry) []views.JournalEntry {
	rows := make([]views.JournalEntry, len(es))
	for i, e := range es {
		rows[i] = journalRow(e)
	}
	return rows
}

func journalRow(e journal.Entry) views.JournalEntry {
	return views.JournalEntry{
		Seq: e.Seq, Time: e.Time, Actor: e.Actor, Host: e.Host, Action: string(e.Action), Vhost: e.Vhost,
		Queue: e.Queue, MessageIDs: e.MessageIDs, Reason: e.Reason, Details: e.Details,
		PrevHash: e.PrevHash, Hash: e.Hash,
	}
}
