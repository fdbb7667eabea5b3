package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Editing a payload, like `git commit`: the decoded JSON opens in $EDITOR
// (unredacted, so a reveal entry is written first); what is saved becomes
// a revision in the journal, never a change to the queue.

// editOpenMsg answers the reveal entry: the file to open.
type editOpenMsg struct {
	queue string
	msg   triage.Triaged
	file  string
	err   error
}

// editDoneMsg answers the editor's exit.
type editDoneMsg struct {
	queue string
	msg   triage.Triaged
	saved []byte // what the editor left in the file, read once it exited
	err   error
}

// revisedMsg answers the revision (or its proposal).
type revisedMsg struct {
	summary string
	err     error
}

func (editOpenMsg) owner() screenID { return screenMessage }
func (editDoneMsg) owner() screenID { return screenMessage }
func (revisedMsg) owner() screenID  { return screenMessage }

// startEdit asks before opening the shown message in $EDITOR.
func (s *messageScreen) startEdit() tea.Cmd {
	c := s.c
	if c.focus != screenMessage {
		c.hint = "edit works on one message: open it first"
		return nil
	}
	t := s.Shown()
	var err error
	switch {
	case c.opts.Revise == nil:
		err = errors.New("edit in $EDITOR is off here (a snapshot, or over SSH): dlqt edit QUEUE --id ID --set PATH=VALUE --reason TEXT")
	case c.mayAct("edit") != nil:
		err = c.mayAct("edit")
	case c.noJournal() != nil:
		err = fmt.Errorf("edit refused: an edit is journalled and %w", c.noJournal())
	case !json.Valid(t.Message.Body):
		err = fmt.Errorf("edit refused: the payload of %s is %w", sanitize.Line(t.ID), approval.ErrNotJSON)
	}
	if err != nil {
		c.setErr(err)
		return nil
	}
	// The editor shows the payload unredacted: an edit is a reveal, and
	// waits for an approved reveal of the message as v does.
	if a := c.opts.Approvals; a != nil && a.Needs(approval.GateReveal, 1) {
		return s.askRevealApproval(a, s.flow.groups.Queue(), t.ID, true)
	}
	c.dialog = &editConfirm{screen: s, queue: s.flow.groups.Queue(), msg: t}
	return nil
}

// editConfirm says what an edit does before the payload leaves redaction.
type editConfirm struct {
	screen *messageScreen
	queue  string
	msg    triage.Triaged
}

func (d *editConfirm) View(width int) string {
	c := d.screen.c
	k := c.Keys
	return box(c.Context, width, []string{
		"Edit the payload in $EDITOR?",
		"",
		"message " + sanitize.Line(d.msg.ID) + " of " + sanitize.Line(d.queue),
		"It opens unredacted: a reveal entry naming " + sanitize.Line(c.opts.Actor) + " is written first.",
		"What you save becomes a revision in the journal (fields changed,",
		"SHA-256 before and after, your reason); the original stays in the",
		"queue untouched, and a replay of it publishes the revision.",
		"",
		confirmKeys(k, "edit"),
	})
}

func (d *editConfirm) Update(msg tea.Msg) (dialog, tea.Cmd) {
	c := d.screen.c
	return confirm(c, d, msg, func() tea.Cmd {
		e := c.entry(triage.ActionReveal, c.vhost(d.screen.flow.groups.Inspection()), d.queue, d.msg.ID, "payload opened unredacted in $EDITOR for an edit")
		return openForEdit(c.opts.Journal, e, d.queue, d.msg)
	}, nil)
}

// openForEdit journals the reveal, then writes the pretty payload to a
// private temporary file.
func openForEdit(j EntryRecorder, e journal.Entry, queue string, t triage.Triaged) tea.Cmd {
	return func() tea.Msg {
		if _, err := j.Append(e); err != nil {
			return editOpenMsg{err: err}
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, t.Message.Body, "", "  "); err != nil {
			return editOpenMsg{err: err}
		}
		f, err := os.CreateTemp("", "dlqt-edit-*.json")
		if err == nil {
			_, err = f.Write(append(pretty.Bytes(), '\n'))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return editOpenMsg{err: err}
		}
		return editOpenMsg{queue: queue, msg: t, file: f.Name()}
	}
}

// editor is $VISUAL, else $EDITOR, else vi, split into its words.
func editor(file string) *exec.Cmd {
	words := strings.Fields(os.Getenv("VISUAL"))
	if len(words) == 0 {
		words = strings.Fields(os.Getenv("EDITOR"))
	}
	if len(words) == 0 {
		words = []string{"vi"}
	}
	return exec.Command(words[0], append(words[1:], file)...)
}

// editUpdate handles the edit's replies; ok is false for other messages.
func (s *messageScreen) editUpdate(msg tea.Msg) (tea.Cmd, bool) {
	c := s.c
	switch msg := msg.(type) {
	case editOpenMsg:
		if msg.err != nil {
			c.setErr(fmt.Errorf("edit: %w", msg.err))
			return nil, true
		}
		return tea.ExecProcess(editor(msg.file), func(err error) tea.Msg {
			return readEdited(msg, err)
		}), true
	case editDoneMsg:
		s.onEdited(msg)
		return nil, true
	case revisedMsg:
		c.busy = ""
		if msg.err != nil {
			c.setErr(fmt.Errorf("edit: %w", msg.err))
		} else {
			c.done = msg.summary
		}
		return nil, true
	}
	return nil, false
}

// readEdited reads what the editor saved and removes the file; it runs
// when the editor exits, outside Update.
func readEdited(open editOpenMsg, editorErr error) tea.Msg {
	saved, err := os.ReadFile(open.file)
	os.Remove(open.file)
	if editorErr == nil {
		editorErr = err
	}
	return editDoneMsg{queue: open.queue, msg: open.msg, saved: saved, err: editorErr}
}

// onEdited takes what was saved; a change that parses asks for the reason.
func (s *messageScreen) onEdited(msg editDoneMsg) {
	c := s.c
	var body bytes.Buffer
	switch {
	case msg.err != nil:
		c.setErr(fmt.Errorf("edit: the editor: %w; nothing stored", msg.err))
		return
	case json.Compact(&body, msg.saved) != nil:
		c.setErr(fmt.Errorf("edit refused: what was saved is %w; nothing stored", approval.ErrNotJSON))
		return
	}
	changes := approval.Diff(msg.msg.Message.Body, body.Bytes())
	if len(changes) == 0 {
		c.done = "edit: no field changed; nothing stored"
		return
	}
	c.dialog = newEditReason(c, msg.queue, msg.msg, body.Bytes(), changes)
}

// editReason asks why; an empty reason is refused.
type editReason struct{ prompt }

func newEditReason(c *programContext, queue string, t triage.Triaged, body []byte, changes []approval.FieldChange) *editReason {
	p := &editReason{prompt: newPrompt(c, "reason: ", "(e.g. zip typo from the checkout bug, INC-88)", 160, c.width-14)}
	p.head = []string{fmt.Sprintf("Revision of %s: %d field(s) changed", sanitize.Line(t.ID), len(changes))}
	for i, ch := range changes {
		if i == 6 {
			p.head = append(p.head, fmt.Sprintf("… and %d more", len(changes)-i))
			break
		}
		p.head = append(p.head, fmt.Sprintf("  %s: %s -> %s", sanitize.Line(ch.Path), sanitize.Line(orNone(ch.Before)), sanitize.Line(orNone(ch.After))))
	}
	p.keys = "enter: journal the revision    esc: drop the edit"
	ctx, revise := c.base, c.opts.Revise
	p.submit = func(reason string) (dialog, tea.Cmd, error) {
		if reason == "" {
			return nil, nil, errors.New("a reason is required: the journal keeps why the payload changed")
		}
		c.busy = "journaling the revision…"
		return nil, func() tea.Msg {
			summary, err := revise(ctx, queue, t, body, reason)
			return revisedMsg{summary: summary, err: err}
		}, nil
	}
	return p
}

func (p *editReason) Update(msg tea.Msg) (dialog, tea.Cmd) { return p.handle(p, msg) }

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
