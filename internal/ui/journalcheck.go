package ui

import (
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// JournalVerifier is a journal opened before its whole check (the TUI's:
// that check grows with the journal, ~0.5 s at 100,000 entries, and the
// first screen does not wait for it). The TUI runs Verify after its first
// screen and refuses every action that writes the journal until it passed;
// *journal.Shared from OpenSharedUnverified is one.
type JournalVerifier interface {
	Verified() bool
	Verify(progress func(done, total uint64)) error
}

// journalCheck is how the whole check of the journal stands: running (with
// how far it got), passed, or failed. The zero value is a journal that
// needs none (checked when it opened, or no journal).
type journalCheck struct {
	running     bool
	done, total uint64
	err         error // the check refused the journal
	progress    chan journalCheckMsg
	result      chan journalCheckMsg
}

// journalCheckMsg is the check's progress, or its end (finished).
type journalCheckMsg struct {
	done, total uint64
	finished    bool
	err         error
}

func (journalCheckMsg) owner() screenID { return screenJournal }

// startCheck runs the journal's whole check in the background when it
// needs one; nil when it does not.
func (c *programContext) startCheck() tea.Cmd {
	v, ok := c.opts.Journal.(JournalVerifier)
	if !ok || v.Verified() {
		return nil
	}
	progress, result := make(chan journalCheckMsg, 1), make(chan journalCheckMsg, 1)
	c.check = journalCheck{running: true, progress: progress, result: result}
	return func() tea.Msg {
		go func() {
			err := v.Verify(func(done, total uint64) { publishCheck(progress, journalCheckMsg{done: done, total: total}) })
			result <- journalCheckMsg{finished: true, err: err}
		}()
		return waitCheck(progress, result)
	}
}

// publishCheck keeps only the latest progress: the check never waits for
// the screen.
func publishCheck(ch chan journalCheckMsg, p journalCheckMsg) {
	for {
		select {
		case ch <- p:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}

func waitCheck(progress, result chan journalCheckMsg) tea.Msg {
	select {
	case r := <-result:
		return r
	case p := <-progress:
		return p
	}
}

// onCheck takes the check's news: progress asks for the next, the end
// opens the journal's writes, or (the journal damaged) turns them off as a
// journal that failed to open does, with the same one line.
func (s *journalScreen) onCheck(msg journalCheckMsg) tea.Cmd {
	k := &s.c.check
	if !k.running {
		return nil
	}
	if !msg.finished {
		k.done, k.total = msg.done, msg.total
		s.showVerify()
		progress, result := k.progress, k.result
		return func() tea.Msg { return waitCheck(progress, result) }
	}
	k.running = false
	if msg.err != nil {
		k.err = msg.err
		s.c.opts.Journal, s.c.opts.JournalErr = nil, msg.err
		s.c.setErr(msg.err)
	}
	s.showVerify()
	return nil
}

// pending says why nothing is written to the journal while its check
// runs, nil when it is not running.
func (k *journalCheck) pending() error {
	if !k.running {
		return nil
	}
	return errors.New("the journal is still being checked (" + k.howFar() + "): try again when the check is done")
}

// howFar is "40,000 of 100,000 entries".
func (k *journalCheck) howFar() string {
	if k.total == 0 {
		return "its pages"
	}
	return fmt.Sprintf("%s of %s entries", views.Count(int(k.done)), views.Count(int(k.total)))
}

// statusPart is the status line's word on the check: how far it got while
// it runs, and for as long as the TUI runs that it failed (the error line
// that said why goes with the next action; each refusal says it again).
func (k *journalCheck) statusPart() string {
	switch {
	case k.running:
		return "checking journal: " + k.howFar()
	case k.err != nil:
		return "JOURNAL DAMAGED: actions off"
	}
	return ""
}

// verifyLine is the journal screen's line on the whole check.
func (k *journalCheck) verifyLine() (string, bool) {
	switch {
	case k.running:
		return "checking the chain: " + k.howFar() + " (actions that write the journal wait for it)", false
	case k.err != nil:
		return "CHAIN BROKEN: " + sanitize.Line(k.err.Error()), true
	}
	return "chain verified: every entry's hash holds", false
}
