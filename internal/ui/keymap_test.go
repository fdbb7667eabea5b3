package ui

import (
	"os"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
)

func defaults(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../keymap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDefaultKeyMapBindsEveryAction(t *testing.T) {
	km, err := LoadKeyMap(defaults(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range actions {
		b := *a.binding(&km)
		if len(b.Keys()) == 0 || b.Help().Desc == "" {
			t.Errorf("action %q: keys %v, help %q", a.name, b.Keys(), b.Help().Desc)
		}
	}
	// the bindings the issue names
	for action, k := range map[string]string{"up": "k", "down": "j", "open": "enter", "back": "esc",
		"filter": "/", "refresh": "r", "tag": "t", "help": "?", "quit": "q", "confirm": "y"} {
		if !bound(t, km, action, k) {
			t.Errorf("%s is not bound to %q", action, k)
		}
	}
	if got := km.Up.Help().Key; got != "↑/k" {
		t.Errorf("up help key %q, want ↑/k", got)
	}
}

func bound(t *testing.T, km KeyMap, action, k string) bool {
	for _, a := range actions {
		if a.name == action {
			return key.Matches(keyPress(k), *a.binding(&km))
		}
	}
	t.Fatalf("no action %q", action)
	return false
}

func TestUserKeyMapOverridesByActionName(t *testing.T) {
	user := []byte("up: {keys: [up, w]}\ndown: {keys: [down, s], help: \"go down\"}\n")
	km, err := LoadKeyMap(defaults(t), user)
	if err != nil {
		t.Fatal(err)
	}
	if !bound(t, km, "up", "w") || bound(t, km, "up", "k") {
		t.Errorf("up keys %v, want [up w]", km.Up.Keys())
	}
	if km.Up.Help().Desc != "up" {
		t.Errorf("up help %q: an override without help keeps the default", km.Up.Help().Desc)
	}
	if km.Down.Help().Desc != "go down" {
		t.Errorf("down help %q", km.Down.Help().Desc)
	}
	if !bound(t, km, "refresh", "r") {
		t.Error("an action the user did not name lost its default")
	}
}

func TestUserKeyMapDrivesTheScreens(t *testing.T) {
	km, err := LoadKeyMap(defaults(t), []byte("open: {keys: [l]}\nback: {keys: [h]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{}, 80, 24)
	h.m.c.Keys = km
	h.m.queues.SelectName("orders.dlq")
	h.send(keyPress("l"))
	if h.m.c.focus != screenGroups {
		t.Fatalf("l did not open the queue (screen %d)", h.m.c.focus)
	}
	h.send(keyPress("h"))
	if h.m.c.focus != screenQueues {
		t.Fatalf("h did not go back (screen %d)", h.m.c.focus)
	}
}

func TestKeyMapErrorsNameTheProblem(t *testing.T) {
	cases := []struct {
		name, user string
		want       []string
	}{
		{"unknown action", "jump: {keys: [x]}", []string{"unknown action", `"jump"`}},
		{"clash with a default", "refresh: {keys: [k]}", []string{`"k"`, `"up"`, `"refresh"`}},
		{"clash inside the file", "tag: {keys: [x]}\nfilter: {keys: [x]}", []string{`"x"`, `"filter"`, `"tag"`}},
		{"unknown field", "up: {keys: [k], colour: red}", []string{"colour"}},
		{"no keys", "up: {keys: []}", []string{`"up"`, "no keys"}},
		{"ctrl+c taken", "refresh: {keys: [ctrl+c]}", []string{"ctrl+c", "quit", `"refresh"`}},
		{"not yaml", "up: [", []string{"user keymap"}},
		{"a screen's key taken by every screen", "copy_trace: {keys: [x]}", []string{`"x"`, `"discard"`, `"copy_trace"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadKeyMap(defaults(t), []byte(c.user))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

func TestDialogKeysMayReuseScreenKeys(t *testing.T) {
	// cancel shares esc with back on purpose: a dialog reads only its own keys
	if _, err := LoadKeyMap(defaults(t), []byte("confirm: {keys: [enter]}")); err != nil {
		t.Fatalf("confirm on enter (also open) was refused: %v", err)
	}
	if _, err := LoadKeyMap(defaults(t), []byte("confirm: {keys: [n]}")); err == nil {
		t.Fatal("confirm and cancel both on n was accepted")
	}
}

// TestScreenKeysMayShareAKey: y runs an approved proposal on the proposals
// screen and copies the stack trace on the message screen; each reads it
// only there.
func TestScreenKeysMayShareAKey(t *testing.T) {
	km, err := LoadKeyMap(defaults(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if km.CopyTrace.Keys()[0] != "y" || km.RunProposal.Keys()[0] != "y" {
		t.Fatalf("copy_trace %v, run_proposal %v", km.CopyTrace.Keys(), km.RunProposal.Keys())
	}
	if _, err := LoadKeyMap(defaults(t), []byte("copy_trace: {keys: [c]}")); err == nil {
		t.Fatal("copy_trace on c, the key of canary (an action of every screen), was accepted")
	}
}

func TestDefaultsMustCoverEveryAction(t *testing.T) {
	d := strings.ReplaceAll(string(defaults(t)), "tag:", "# tag:")
	_, err := LoadKeyMap([]byte(d), nil)
	if err == nil || !strings.Contains(err.Error(), `"tag"`) {
		t.Fatalf("defaults without tag: err = %v", err)
	}
}
