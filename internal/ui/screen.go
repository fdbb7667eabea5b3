package ui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/views"
)

// screenID names a screen: the root holds one of each, and the focus and
// the replies name them.
type screenID int

const (
	screenQueues screenID = iota
	screenGroups
	screenMessages
	screenMessage
	screenReplay  // dry run, gauge, outcome
	screenJournal // the journal's entries
	screenDoctor  // the topology doctor's findings
	screenProposals
)

// screen is one full-screen view (soft-serve's Component): it takes the keys
// the root leaves it and the replies to its own requests, draws a string of
// the size it was given, and lists its keys for the help line.
type screen interface {
	help.KeyMap
	Update(tea.Msg) (screen, tea.Cmd)
	View() string
	SetSize(w, h int)
}

// dialog is a box over the screen that takes every key until it closes.
type dialog interface {
	Update(tea.Msg) (dialog, tea.Cmd) // the dialog that follows; nil closes it
	View(width int) string
}

// reply answers a request and names the screen that made it (gh-dash's
// SectionMsg). The screen drops it unless it carries the id of the request
// it still waits for, so a slow answer never lands on the wrong screen.
type reply interface{ owner() screenID }

// lister is a screen with a list the filter bar narrows.
type lister interface {
	list() *views.Table // nil while no list shows (one entry open)
	refilter() tea.Cmd  // puts the bar's text in force (or starts to)
	onResolved(filterResolvedMsg)
	filterHelp() string // the help line while the bar has the keyboard
}

// leaver is told after every update that it is not the focused screen.
type leaver interface{ unfocused() }

// plainFilter is the bar of lists that filter by substring as it is typed.
type plainFilter struct{}

func (plainFilter) refilter() tea.Cmd            { return nil }
func (plainFilter) onResolved(filterResolvedMsg) {}
func (plainFilter) filterHelp() string {
	return "typing filters the list • enter keep filter • esc clear • ctrl+c quit"
}

// listKeys is what every list does alike: while the bar has the keyboard
// it takes every key (and paste), filter opens it and back first clears a
// filter in force. ok is false for the keys left to the screen.
func listKeys(l lister, keys *views.KeyMap, msg tea.Msg) (cmd tea.Cmd, ok bool) {
	t := l.list()
	if t == nil {
		return nil, false
	}
	if r, ok := msg.(filterResolvedMsg); ok {
		l.onResolved(r)
		return nil, true
	}
	k, isKey := msg.(tea.KeyPressMsg)
	_, isPaste := msg.(tea.PasteMsg)
	switch {
	case t.Filtering() && (isKey || isPaste):
		cmd = t.Update(msg)
		return tea.Batch(cmd, l.refilter()), true
	case !isKey:
		return nil, false
	case key.Matches(k, keys.Filter):
		return t.StartFilter(), true
	case key.Matches(k, keys.Back) && t.FilterValue() != "":
		t.ClearFilter()
		return l.refilter(), true
	}
	return nil, false
}

// keyedList is a list screen with keys of its own.
type keyedList interface {
	lister
	key(tea.KeyPressMsg) tea.Cmd
}

// listUpdate gives a key to the list first (listKeys), then to the screen.
func listUpdate(s keyedList, keys *views.KeyMap, msg tea.Msg) tea.Cmd {
	if cmd, ok := listKeys(s, keys, msg); ok {
		return cmd
	}
	if k, ok := msg.(tea.KeyPressMsg); ok {
		return s.key(k)
	}
	return nil
}

// returnTo is where a side screen (journal, doctor, replay) was opened
// from, so back goes there.
type returnTo struct{ from screenID }

func (r *returnTo) visit(c *programContext, id screenID) {
	if c.focus != id {
		r.from = c.focus
	}
	c.focus = id
}

func (r *returnTo) leave(c *programContext) { c.focus = r.from }

// ref is a pointer to a copy of v: the views are made by value.
func ref[T any](v T) *T { return &v }
