package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// revealConfirm asks before the unredacted payload of one message shows.
type revealConfirm struct {
	screen    *messageScreen
	queue, id string
}

func (d *revealConfirm) View(width int) string {
	c := d.screen.c
	k := c.Keys
	body := strings.Join([]string{
		c.Styles.Section.Render("Reveal the unredacted payload?"),
		"",
		"message " + sanitize.Line(d.id) + " of " + sanitize.Line(d.queue),
		"Secrets masked on every screen will show in clear.",
		"A reveal entry naming " + sanitize.Line(c.opts.Actor) + " is written to the journal first;",
		"leaving the message hides the payload again.",
		"",
		confirmKeys(k, "reveal"),
	}, "\n")
	return c.Styles.Dialog.Width(min(width-2, 76)).Render(body)
}

// Update writes the entry on confirm and closes on cancel; other keys
// leave it open.
func (d *revealConfirm) Update(msg tea.Msg) (dialog, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	c := d.screen.c
	switch {
	case ok && key.Matches(k, c.Keys.Confirm):
		if err := c.mayAct("reveal"); err != nil {
			c.setErr(err)
			return nil, nil
		}
		c.busy = "writing the reveal entry to the journal…"
		return nil, revealCmd(c.opts.Journal, c.entry(triage.ActionReveal, c.vhost(d.screen.flow.groups.Inspection()),
			d.queue, d.id, "payload shown unredacted in the TUI"))
	case ok && key.Matches(k, c.Keys.Cancel):
		return nil, nil
	}
	return d, nil
}

// revealedMsg answers the reveal entry written to the journal.
type revealedMsg struct {
	queue, id string
	seq       uint64
	err       error
}

func (revealedMsg) owner() screenID { return screenMessage }

func revealCmd(j EntryRecorder, e journal.Entry) tea.Cmd {
	return func() tea.Msg {
		written, err := j.Append(e)
		return revealedMsg{queue: e.Queue, id: e.MessageIDs[0], seq: written.Seq, err: err}
	}
}

// startReveal asks for confirmation, on the message screen only, with a
// journal to write to: no entry, no reveal.
func (s *messageScreen) startReveal() tea.Cmd {
	c := s.c
	if c.focus != screenMessage {
		c.hint = "reveal works on one message: open it first"
		return nil
	}
	if err := c.mayAct("reveal"); err != nil {
		c.setErr(err)
		return nil
	}
	if err := c.noJournal(); err != nil {
		c.setErr(fmt.Errorf("reveal refused: a reveal is journalled and %w", err))
		return nil
	}
	queue, id := s.flow.groups.Queue(), s.Shown().ID
	if a := c.opts.Approvals; a != nil && a.Needs(approval.GateReveal, 1) {
		return s.askRevealApproval(a, queue, id, false)
	}
	c.dialog = &revealConfirm{screen: s, queue: queue, id: id}
	return nil
}

// revealGateMsg answers whether an approved reveal of the message waits
// for this user; else the proposal that asks for one.
type revealGateMsg struct {
	queue, id string
	proposal  string
	approved  bool
	edit      bool // asked for an edit in $EDITOR, which shows the payload too
	err       error
}

func (revealGateMsg) owner() screenID { return screenMessage }

// askRevealApproval looks for this user's approved reveal of the message,
// proposing one when there is none; edit when it is for an edit.
func (s *messageScreen) askRevealApproval(a *Approvals, queue, id string, edit bool) tea.Cmd {
	c := s.c
	c.busy = "asking whether this reveal is approved…"
	var msg triage.Triaged
	if insp := s.flow.groups.Inspection(); insp != nil {
		for i := range insp.Len() {
			if t := insp.At(i); t.ID == id {
				msg = t
			}
		}
	}
	ctx := c.base
	return func() tea.Msg {
		msg, err := msg.Whole() // the index entry has no body to reveal
		if err != nil {
			return revealGateMsg{queue: queue, id: id, edit: edit, err: err}
		}
		p, ok, err := a.Reveal(ctx, queue, msg)
		return revealGateMsg{queue: queue, id: id, proposal: p, approved: ok, edit: edit, err: err}
	}
}

func (s *messageScreen) onRevealGate(msg revealGateMsg) {
	c := s.c
	c.busy = ""
	switch {
	case msg.err != nil:
		c.setErr(fmt.Errorf("reveal refused: %w", msg.err))
	case c.focus != screenMessage || s.Shown().ID != msg.id:
		c.hint = "reveal: the message is no longer shown"
	case msg.approved && msg.edit:
		c.dialog = &editConfirm{screen: s, queue: msg.queue, msg: s.Shown()}
	case msg.approved:
		c.dialog = &revealConfirm{screen: s, queue: msg.queue, id: msg.id}
	default:
		c.done = fmt.Sprintf("reveal needs a second person (approvals.reveal): proposal %s waits for an approver (dlqt approve %s); nothing was shown", msg.proposal, msg.proposal)
	}
}

// onRevealed shows the payload once its entry is written, and only if the
// user is still on that message.
func (s *messageScreen) onRevealed(msg revealedMsg) {
	c := s.c
	c.busy = ""
	if msg.err != nil {
		c.setErr(fmt.Errorf("reveal refused: the journal entry could not be written: %w", msg.err))
		return
	}
	if err := c.mayAct("reveal"); err != nil {
		c.setErr(err)
		return
	}
	shown := s.Shown()
	if c.focus != screenMessage || shown.ID != msg.id {
		c.done = fmt.Sprintf("reveal of %s journalled (#%d) but not shown: you left the message", sanitize.Line(msg.id), msg.seq)
		return
	}
	p := triage.RenderMessage(shown.Message, nil) // sanitised, not redacted
	s.Reveal(p.Text, msg.seq)
	c.done = fmt.Sprintf("revealed %s; journal entry #%d", sanitize.Line(msg.id), msg.seq)
}
