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
// may not share a key; dialog actions are read only while a dialog is open.
type action struct {
	name    string
	dialog  bool
	binding func(*KeyMap) *key.Binding
}

var actions = []action{
	{"up", false, func(k *KeyMap) *key.Binding { return &k.Up }},
	{"down", false, func(k *KeyMap) *key.Binding { return &k.Down }},
	{"page_up", false, func(k *KeyMap) *key.Binding { return &k.PageUp }},
	{"page_down", false, func(k *KeyMap) *key.Binding { return &k.PageDown }},
	{"top", false, func(k *KeyMap) *key.Binding { return &k.Top }},
	{"bottom", false, func(k *KeyMap) *key.Binding { return &k.Bottom }},
	{"left", false, func(k *KeyMap) *key.Binding { return &k.Left }},
	{"right", false, func(k *KeyMap) *key.Binding { return &k.Right }},
	{"open", false, func(k *KeyMap) *key.Binding { return &k.Open }},
	{"back", false, func(k *KeyMap) *key.Binding { return &k.Back }},
	{"filter", false, func(k *KeyMap) *key.Binding { return &k.Filter }},
	{"refresh", false, func(k *KeyMap) *key.Binding { return &k.Refresh }},
	{"tag", false, func(k *KeyMap) *key.Binding { return &k.Tag }},
	{"journal", false, func(k *KeyMap) *key.Binding { return &k.Journal }},
	{"export_journal", false, func(k *KeyMap) *key.Binding { return &k.ExportJournal }},
	{"doctor", false, func(k *KeyMap) *key.Binding { return &k.Doctor }},
	{"help", false, func(k *KeyMap) *key.Binding { return &k.Help }},
	{"quit", false, func(k *KeyMap) *key.Binding { return &k.Quit }},
	{"switch_context", false, func(k *KeyMap) *key.Binding { return &k.SwitchContext }},
	{"proposals", false, func(k *KeyMap) *key.Binding { return &k.Proposals }},
	{"run_proposal", false, func(k *KeyMap) *key.Binding { return &k.RunProposal }},
	{"mark", false, func(k *KeyMap) *key.Binding { return &k.Mark }},
	{"discard", false, func(k *KeyMap) *key.Binding { return &k.Discard }},
	{"replay", false, func(k *KeyMap) *key.Binding { return &k.Replay }},
	{"resume_replay", false, func(k *KeyMap) *key.Binding { return &k.ResumeReplay }},
	{"reveal", false, func(k *KeyMap) *key.Binding { return &k.Reveal }},
	{"edit_payload", false, func(k *KeyMap) *key.Binding { return &k.EditPayload }},
	{"destination", false, func(k *KeyMap) *key.Binding { return &k.Destination }},
	{"canary", false, func(k *KeyMap) *key.Binding { return &k.Canary }},
	{"observe", false, func(k *KeyMap) *key.Binding { return &k.Observe }},
	{"rate", false, func(k *KeyMap) *key.Binding { return &k.Rate }},
	{"pause", false, func(k *KeyMap) *key.Binding { return &k.Pause }},
	{"ramp_up", false, func(k *KeyMap) *key.Binding { return &k.RampUp }},
	{"abort", false, func(k *KeyMap) *key.Binding { return &k.Abort }},
	{"confirm", true, func(k *KeyMap) *key.Binding { return &k.Confirm }},
	{"cancel", true, func(k *KeyMap) *key.Binding { return &k.Cancel }},
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
	owner := map[bool]map[string]string{false: {}, true: {}} // scope -> key -> action
	for _, a := range actions {
		s := specs[a.name]
		if len(s.Keys) == 0 {
			return KeyMap{}, fmt.Errorf("keymap: action %q has no keys", a.name)
		}
		for _, k := range s.Keys {
			if k == "" {
				return KeyMap{}, fmt.Errorf("keymap: action %q has an empty key", a.name)
			}
			if k == emergencyQuit && a.name != "quit" && !a.dialog {
				return KeyMap{}, fmt.Errorf("keymap: key %q is reserved for quit, not %q", k, a.name)
			}
			if other, ok := owner[a.dialog][k]; ok {
				return KeyMap{}, fmt.Errorf("keymap: key %q is bound to both %q and %q", k, other, a.name)
			}
			owner[a.dialog][k] = a.name
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
