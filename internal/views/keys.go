package views

import "charm.land/bubbles/v2/key"

// KeyMap holds one binding per action. internal/ui fills it from keymap.yaml
// (plus the user's override file); views only match against it.
type KeyMap struct {
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	Left     key.Binding // scrolls what is never wrapped (the doctor's fix commands)
	Right    key.Binding
	Open     key.Binding
	Back     key.Binding
	Filter   key.Binding
	Refresh  key.Binding
	Tag      key.Binding
	Journal  key.Binding
	// ExportJournal writes the journal as JSONL to a file (journal screen).
	ExportJournal key.Binding
	// TeamTrail switches the journal screen between this journal and the
	// team's audit stream.
	TeamTrail key.Binding
	Doctor    key.Binding // the topology doctor's findings
	Help      key.Binding
	Quit      key.Binding
	// SwitchContext opens the picker of the config file's broker contexts.
	SwitchContext key.Binding
	// Proposals lists the approval workflow's proposals; RunProposal (on
	// that screen) runs the approved one under the cursor.
	Proposals   key.Binding
	RunProposal key.Binding

	// Actions on messages.
	Mark         key.Binding
	Discard      key.Binding
	Replay       key.Binding
	ResumeReplay key.Binding
	Reveal       key.Binding // the unredacted payload, journalled
	EditPayload  key.Binding // a revision of the payload in $EDITOR
	// CopyTrace copies the message's whole stack trace (message screen).
	CopyTrace key.Binding

	// The replay screen.
	Destination key.Binding
	Canary      key.Binding
	Observe     key.Binding
	Rate        key.Binding
	Pause       key.Binding
	RampUp      key.Binding
	Abort       key.Binding

	// Dialog scope: only read while a dialog is open, so they may share keys
	// with the actions above (esc cancels a dialog and goes back elsewhere).
	Confirm key.Binding
	Cancel  key.Binding
}

// navigation is the short list of movement keys every list shows in its full help.
func (k KeyMap) navigation() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}
}

func (k KeyMap) general() []key.Binding {
	return []key.Binding{k.Refresh, k.Help, k.Quit}
}
