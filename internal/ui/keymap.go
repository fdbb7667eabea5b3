package ui

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	"go.yaml.in/yaml/v3"

	"github.com/dlqt/dlqt/internal/views"
)

// KeyMap is one key.Binding per action; the views match against it.
type KeyMap = views.KeyMap

// action ties a keymap.yaml name to its binding. Actions of the same scope
// may not share a key; dialog actions are read only while a dialog is open;
// an action of one screen (the proposals', the message's) may share a key
// with another screen's, never with an action of every screen.
type action struct {
	name    string
	scope   string
	binding func(*KeyMap) *key.Binding
}

// Scopes of actions: every screen, dialogs, and single screens.
const (
	scopeAll       = ""
	scopeDialog    = "dialog"
	scopeProposals = "proposals screen"
	scopeMessage   = "message screen"
	scopeJournal   = "journal screen"
)

// clash says whether actions of scopes a and b may not share a key.
func clash(a, b string) bool {
	if a == scopeDialog || b == scopeDialog {
		return a == b
	}
	return a == b || a == scopeAll || b == scopeAll
}

var actions = []action{
	{"up", scopeAll, func(k *KeyMap) *key.Binding { return &k.Up }},
	{"down", scopeAll, func(k *KeyMap) *key.Binding { return &k.Down }},
	{"page_up", scopeAll, func(k *KeyMap) *key.Binding { return &k.PageUp }},
	{"page_down", scopeAll, func(k *KeyMap) *key.Binding { return &k.PageDown }},
	{"top", scopeAll, func(k *KeyMap) *key.Binding { return &k.Top }},
	{"bottom", scopeAll, func(k *KeyMap) *key.Binding { return &k.Bottom }},
	{"left", scopeAll, func(k *KeyMap) *key.Binding { return &k.Left }},
	{"right", scopeAll, func(k *KeyMap) *key.Binding { return &k.Right }},
	{"open", scopeAll, func(k *KeyMap) *key.Binding { return &k.Open }},
	{"back", scopeAll, func(k *KeyMap) *key.Binding { return &k.Back }},
	{"filter", scopeAll, func(k *KeyMap) *key.Binding { return &k.Filter }},
	{"refresh", scopeAll, func(k *KeyMap) *key.Binding { return &k.Refresh }},
	{"tag", scopeAll, func(k *KeyMap) *key.Binding { return &k.Tag }},
	{"journal", scopeAll, func(k *KeyMap) *key.Binding { return &k.Journal }},
	{"export_journal", scopeAll, func(k *KeyMap) *key.Binding { return &k.ExportJournal }},
	{"team_trail", scopeJournal, func(k *KeyMap) *key.Binding { return &k.TeamTrail }},
	{"doctor", scopeAll, func(k *KeyMap) *key.Binding { return &k.Doctor }},
	{"help", scopeAll, func(k *KeyMap) *key.Binding { return &k.Help }},
	{"quit", scopeAll, func(k *KeyMap) *key.Binding { return &k.Quit }},
	{"switch_context", scopeAll, func(k *KeyMap) *key.Binding { return &k.SwitchContext }},
	{"proposals", scopeAll, func(k *KeyMap) *key.Binding { return &k.Proposals }},
	{"run_proposal", scopeProposals, func(k *KeyMap) *key.Binding { return &k.RunProposal }},
	{"mark", scopeAll, func(k *KeyMap) *key.Binding { return &k.Mark }},
	{"discard", scopeAll, func(k *KeyMap) *key.Binding { return &k.Discard }},
	{"replay", scopeAll, func(k *KeyMap) *key.Binding { return &k.Replay }},
	{"resume_replay", scopeAll, func(k *KeyMap) *key.Binding { return &k.ResumeReplay }},
	{"reveal", scopeAll, func(k *KeyMap) *key.Binding { return &k.Reveal }},
	{"edit_payload", scopeAll, func(k *KeyMap) *key.Binding { return &k.EditPayload }},
	{"copy_trace", scopeMessage, func(k *KeyMap) *key.Binding { return &k.CopyTrace }},
	{"destination", scopeAll, func(k *KeyMap) *key.Binding { return &k.Destination }},
	{"canary", scopeAll, func(k *KeyMap) *key.Binding { return &k.Canary }},
	{"observe", scopeAll, func(k *KeyMap) *key.Binding { return &k.Observe }},
	{"rate", scopeAll, func(k *KeyMap) *key.Binding { return &k.Rate }},
	{"pause", scopeAll, func(k *KeyMap) *key.Binding { return &k.Pause }},
	{"ramp_up", scopeAll, func(k *KeyMap) *key.Binding { return &k.RampUp }},
	{"abort", scopeAll, func(k *KeyMap) *key.Binding { return &k.Abort }},
	{"confirm", scopeDialog, func(k *KeyMap) *key.Binding { return &k.Confirm }},
	{"cancel", scopeDialog, func(k *KeyMap) *key.Binding { return &k.Cancel }},
}

// bindingSpec is one action's entry in keymap.yaml.
type bindingSpec struct {
	Keys []string `yaml:"keys"`
	Help string   `yaml:"help"`
}

// emergencyQuit always quits, whatever the keymap says, so no user file can
// lock anyone inside the program.
const emergencyQuit = "ctrl+c"

// LoadKeyMap builds the keymap from the embedded defaults (keymap.yaml) and
// an optional user file (nil or empty: none) that overrides actions by
// name. An unknown action, a missing one, a field other than keys/help, an
// action without keys or two actions sharing a key is an error naming it.
func LoadKeyMap(defaults, user []byte) (KeyMap, error) {
	specs, err := parseKeyMap("default keymap", defaults)
	if err != nil {
		return KeyMap{}, err
	}
	for _, a := range actions {
		if _, ok := specs[a.name]; !ok {
			return KeyMap{}, fmt.Errorf("default keymap: action %q has no entry", a.name)
		}
	}
	over, err := parseKeyMap("user keymap", user)
	if err != nil {
		return KeyMap{}, err
	}
	for name, o := range over {
		s := specs[name]
		if o.Keys != nil {
			s.Keys = o.Keys
		}
		if o.Help != "" {
			s.Help = o.Help
		}
		specs[name] = s
	}

	var km KeyMap
	type bound struct{ action, scope string }
	owners := map[string][]bound{} // key -> the actions bound to it
	for _, a := range actions {
		s := specs[a.name]
		if len(s.Keys) == 0 {
			return KeyMap{}, fmt.Errorf("keymap: action %q has no keys", a.name)
		}
		for _, k := range s.Keys {
			if k == "" {
				return KeyMap{}, fmt.Errorf("keymap: action %q has an empty key", a.name)
			}
			if k == emergencyQuit && a.name != "quit" && a.scope != scopeDialog {
				return KeyMap{}, fmt.Errorf("keymap: key %q is reserved for quit, not %q", k, a.name)
			}
			for _, other := range owners[k] {
				if clash(other.scope, a.scope) {
					return KeyMap{}, fmt.Errorf("keymap: key %q is bound to both %q and %q", k, other.action, a.name)
				}
			}
			owners[k] = append(owners[k], bound{a.name, a.scope})
		}
		*a.binding(&km) = key.NewBinding(key.WithKeys(s.Keys...), key.WithHelp(keyLabel(s.Keys), s.Help))
	}
	return km, nil
}

func parseKeyMap(what string, b []byte) (map[string]bindingSpec, error) {
	specs := map[string]bindingSpec{}
	if len(bytes.TrimSpace(b)) == 0 {
		return specs, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&specs); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	known := map[string]bool{}
	for _, a := range actions {
		known[a.name] = true
	}
	var unknown []string
	for name := range specs {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("%s: unknown action %q (actions: %s)", what, unknown[0], actionNames())
	}
	return specs, nil
}

func actionNames() string {
	names := make([]string, len(actions))
	for i, a := range actions {
		names[i] = a.name
	}
	return strings.Join(names, ", ")
}

// keyLabel is how help shows a binding's keys: "↑/k".
func keyLabel(keys []string) string {
	arrows := map[string]string{"up": "↑", "down": "↓", "left": "←", "right": "→"}
	out := make([]string, len(keys))
	for i, k := range keys {
		if a, ok := arrows[k]; ok {
			k = a
		}
		out[i] = k
	}
	return strings.Join(out, "/")
}
