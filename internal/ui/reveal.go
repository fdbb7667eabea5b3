package ui

import (
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// revealConfirm asks before the unredacted payload of one message shows.
type revealConfirm struct {
	queue, id string
}

func (d revealConfirm) view(ctx *views.Context, width int, actor string) string {
	k := ctx.Keys
	body := strings.Join([]string{
		ctx.Styles.Section.Render("Reveal the unredacted payload?"),
		"",
		"message " + sanitize.Line(d.id) + " of " + sanitize.Line(d.queue),
		"Secrets masked on every screen will show in clear.",
		"A reveal entry naming " + sanitize.Line(actor) + " is written to the journal first;",
		"leaving the message hides the payload again.",
		"",
		k.Confirm.Help().Key + " reveal   " + k.Cancel.Help().Key + " cancel",
	}, "\n")
	return ctx.Styles.Dialog.Width(min(width-2, 76)).Render(body)
}

// revealedMsg answers the reveal entry written to the journal.
type revealedMsg struct {
	queue, id string
	seq       uint64
	err       error
}

func revealCmd(j *journal.Journal, e journal.Entry) tea.Cmd {
	return func() tea.Msg {
		written, err := j.Append(e)
		return revealedMsg{queue: e.Queue, id: e.MessageIDs[0], seq: written.Seq, err: err}
	}
}

// startReveal asks for confirmation, on the message screen only, with a
// journal to write to: no entry, no reveal.
func (m *Model) startReveal() tea.Cmd {
	if m.screen != screenMessage {
		m.hint = "reveal works on one message: open it first"
		return nil
	}
	if m.opts.Journal == nil {
		err := m.opts.JournalErr
		if err == nil {
			err = errors.New("no journal is open")
		}
		m.setErr(fmt.Errorf("reveal refused: a reveal is journalled and %w", err))
		return nil
	}
	m.dialog = revealConfirm{queue: m.groups.Queue(), id: m.message.Shown().ID}
	return nil
}

func (m *Model) revealKey(d revealConfirm, k tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(k, m.ctx.Keys.Confirm):
		m.dialog = nil
		m.busy = "writing the reveal entry to the journal…"
		return revealCmd(m.opts.Journal, journal.Entry{
			Actor: m.opts.Actor, Host: m.opts.Host, Action: triage.ActionReveal,
			Vhost: m.vhost(m.groups.Inspection()), Queue: d.queue, MessageIDs: []string{d.id},
			Reason: "payload shown unredacted in the TUI",
		})
	case key.Matches(k, m.ctx.Keys.Cancel):
		m.dialog = nil
	}
	return nil
}

// onRevealed shows the payload once its entry is written, and only if the
// user is still on that message.
func (m *Model) onRevealed(msg revealedMsg) tea.Cmd {
	m.busy = ""
	if msg.err != nil {
		m.setErr(fmt.Errorf("reveal refused: the journal entry could not be written: %w", msg.err))
		return nil
	}
	shown := m.message.Shown()
	if m.screen != screenMessage || shown.ID != msg.id {
		m.done = fmt.Sprintf("reveal of %s journalled (#%d) but not shown: you left the message", sanitize.Line(msg.id), msg.seq)
		return nil
	}
	p := triage.RenderPayload(shown.Message.Body, shown.Message.Properties.ContentType, nil) // sanitised, not redacted
	m.message.Reveal(p.Text, msg.seq)
	m.done = fmt.Sprintf("revealed %s; journal entry #%d", sanitize.Line(msg.id), msg.seq)
	return nil
}
