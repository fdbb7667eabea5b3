package ui

import (
	"errors"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// messagesScreen shows the messages of one group; marks choose what the
// next action takes.
type messagesScreen struct {
	*views.Messages
	fieldFilter
	flow *browseFlow
}

func (s *messagesScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	return s, listUpdate(s, &s.c.Keys, msg)
}

// key handles the screen's own keys, those the list left.
func (s *messagesScreen) key(k tea.KeyPressMsg) tea.Cmd {
	keys := s.c.Keys
	switch {
	case key.Matches(k, keys.Open):
		s.flow.openMessage()
	case key.Matches(k, keys.Back):
		s.c.focus = screenGroups
	case key.Matches(k, keys.Refresh):
		return s.flow.refresh()
	case key.Matches(k, keys.Tag):
		if t, ok := s.Selected(); ok {
			s.flow.startTag(t.ID)
		}
	case key.Matches(k, keys.Mark):
		s.ToggleMark()
	default:
		return s.Messages.Update(k)
	}
	return nil
}

// target is the marked messages the filter shows, else the selected one.
func (s *messagesScreen) target(*triage.Inspection) (target, error) {
	if ids := s.Marked(); len(ids) > 0 {
		return target{ids: ids, what: views.Plural(len(ids), "marked message")}, nil
	}
	t, ok := s.Selected()
	if !ok {
		return target{}, errors.New("no message selected")
	}
	return target{ids: []string{t.ID}, what: "message " + sanitize.Line(t.ID)}, nil
}

// messageScreen shows one message; a journalled reveal shows its payload
// unredacted until the user leaves it.
type messageScreen struct {
	*views.Message
	c    *programContext
	flow *browseFlow
}

func (s *messageScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	if r, ok := msg.(revealedMsg); ok {
		s.onRevealed(r)
		return s, nil
	}
	if r, ok := msg.(revealGateMsg); ok {
		s.onRevealGate(r)
		return s, nil
	}
	if r, ok := msg.(traceCopiedMsg); ok {
		s.onTraceCopied(r)
		return s, nil
	}
	if cmd, ok := s.editUpdate(msg); ok {
		return s, cmd
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return s, nil
	}
	keys := s.c.Keys
	switch {
	case key.Matches(k, keys.Back):
		s.Hide() // a reveal lasts while the message is on screen
		s.c.focus = screenMessages
	case key.Matches(k, keys.Refresh):
		return s, s.flow.refresh()
	case key.Matches(k, keys.Tag):
		s.flow.startTag(s.Shown().ID)
	case key.Matches(k, keys.CopyTrace):
		return s, s.copyTrace()
	default:
		return s, s.Message.Update(k)
	}
	return s, nil
}

// unfocused hides a revealed payload: however the user left, it goes.
func (s *messageScreen) unfocused() {
	if s.Revealed() {
		s.Hide()
	}
}

func (s *messageScreen) target(*triage.Inspection) (target, error) {
	id := s.Shown().ID
	return target{ids: []string{id}, what: "message " + sanitize.Line(id)}, nil
}
