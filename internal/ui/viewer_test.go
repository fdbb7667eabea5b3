package ui

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// countingSweeper counts every sweep a session reaches, whatever it asked.
type countingSweeper struct{ calls atomic.Int32 }

func (s *countingSweeper) Sweep(context.Context, string, triage.BrowseOptions, func([]triage.Message) []int) (triage.SweepResult, error) {
	s.calls.Add(1)
	return triage.SweepResult{}, nil
}

// viewerHarness is a `dlqt serve` session of a viewer with the write side
// wired as for an operator, so only the role can stop an action.
func viewerHarness(t *testing.T) (*harness, *countingSweeper, *atomic.Int32) {
	t.Helper()
	sw := &countingSweeper{}
	var opened atomic.Int32
	h := newHarness(t, Options{Journal: openJournal(t), Actor: "bob", Role: "viewer", Actions: &Actions{
		Sweeper: sw,
		OpenReplay: func(context.Context, string, string, bool, int) (replay.Port, error) {
			opened.Add(1)
			return nil, context.Canceled
		},
	}}, 120, 40)
	return h, sw, &opened
}

// everyKey is each key of the keymap, every printable ASCII character and
// the named keys, so a binding added later is pressed too.
func everyKey(km KeyMap) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for _, a := range actions {
		for _, k := range a.binding(&km).Keys() {
			out = append(out, keyPress(k))
		}
	}
	for r := rune(0x21); r < 0x7f; r++ {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	for _, name := range []string{"enter", "space", "tab", "esc", "up", "down", "ctrl+r", "ctrl+d"} {
		out = append(out, keyPress(name))
	}
	return out
}

func TestViewerReachesNoActionByAnyKey(t *testing.T) {
	h, sw, opened := viewerHarness(t)
	screens := map[string]func(){
		"queues":   func() {},
		"groups":   func() { h.openQueue("orders.dlq") },
		"messages": func() { openInvalidSKU(h) },
		"message":  func() { openInvalidSKU(h); h.press("open") },
	}
	for name, open := range screens {
		for _, k := range everyKey(h.m.c.Keys) {
			h.send(keyPress("esc"))
			h.m.c.dialog, h.m.c.focus = nil, screenQueues
			open()
			h.press("mark")
			h.send(k)
			// whatever the key opened, confirm it twice
			h.send(keyPress("enter"))
			h.typeText("y")
			h.send(keyPress("enter"))
			if sw.calls.Load() != 0 || opened.Load() != 0 {
				t.Fatalf("on %s, key %q reached an action (sweeps %d, replays opened %d)", name, k.String(), sw.calls.Load(), opened.Load())
			}
			if h.m.message.Revealed() {
				t.Fatalf("on %s, key %q revealed a payload", name, k.String())
			}
			if h.quit {
				h.quit = false
			}
		}
	}
	es, _, err := h.m.c.opts.Journal.Page(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Action == triage.ActionReveal || e.Action == triage.ActionDiscard {
			t.Errorf("journal has a %s entry by a viewer: %+v", e.Action, e)
		}
	}
}

func TestViewerIsToldActionKeysAreNotAllowed(t *testing.T) {
	h, _, _ := viewerHarness(t)
	h.mustShow("actor bob │ viewer")
	openInvalidSKU(h)
	if len(h.m.offKeys) != 4 {
		t.Fatalf("%d keys taken away, want discard, replay, resume and reveal", len(h.m.offKeys))
	}
	for _, b := range h.m.offKeys {
		h.m.c.hint = ""
		h.send(keyPress(b.Keys()[0]))
		h.mustShow("not allowed: bob is a viewer (discard, replay and reveal need an operator)")
	}
}

func TestViewerActionPathsRefuseEvenWithoutTheKeymap(t *testing.T) {
	h, sw, _ := viewerHarness(t)
	openInvalidSKU(h)
	tg := target{queue: "orders.dlq", ids: []string{"m-1001"}}
	if cmd := h.m.discard.run(tg, "cleanup", 0); cmd != nil {
		t.Fatal("a viewer's discard returned a command")
	}
	h.mustShow("discard is not allowed: bob is a viewer")
	if cmd := h.m.replay.startRun(replay.Plan{Queue: "orders.dlq"}); cmd != nil {
		t.Fatal("a viewer's replay returned a command")
	}
	h.mustShow("replay is not allowed: bob is a viewer")
	h.press("open")
	h.m.message.startReveal()
	if h.m.c.dialog != nil {
		t.Fatalf("a viewer's reveal opened %T", h.m.c.dialog)
	}
	h.mustShow("reveal is not allowed: bob is a viewer")
	if sw.calls.Load() != 0 {
		t.Fatal("a viewer swept")
	}
}

// An operator whose role dropped while the session was open (the server
// re-read its users file) is refused at the moment an action runs, though
// the session began with the operator's keymap and write side.
func TestADemotedOperatorsActionsAreRefusedAsTheyRun(t *testing.T) {
	sw := &countingSweeper{}
	var demoted atomic.Bool
	h := newHarness(t, Options{Journal: openJournal(t), Actor: "carol", Role: "operator", Actions: &Actions{Sweeper: sw},
		MayActNow: func() error {
			if demoted.Load() {
				return errors.New("carol is now a viewer (the users file was reloaded)")
			}
			return nil
		}}, 120, 40)
	openInvalidSKU(h)
	demoted.Store(true)
	tg := target{queue: "orders.dlq", ids: []string{"m-1001"}}
	if cmd := h.m.discard.run(tg, "cleanup", 0); cmd != nil {
		t.Fatal("a demoted operator's discard returned a command")
	}
	h.mustShow("discard is not allowed: carol is now a viewer")
	if cmd := h.m.replay.startRun(replay.Plan{Queue: "orders.dlq"}); cmd != nil {
		t.Fatal("a demoted operator's replay returned a command")
	}
	if sw.calls.Load() != 0 {
		t.Fatal("a demoted operator swept")
	}
}
