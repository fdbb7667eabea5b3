package ui

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

func openM1001(h *harness) {
	h.t.Helper()
	openInvalidSKU(h)
	h.m.messages.SelectID("m-1001")
	h.press("open")
	if h.m.c.focus != screenMessage {
		h.t.Fatalf("screen %d, want message", h.m.c.focus)
	}
}

func reveals(t *testing.T, j *journal.Journal) []journal.Entry {
	t.Helper()
	es, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var out []journal.Entry
	for _, e := range es {
		if e.Action == triage.ActionReveal {
			out = append(out, e)
		}
	}
	return out
}

// TestRevealAsksThenJournalsBeforeShowing: v asks; y writes the reveal
// entry (actor, message id, queue) and only its answer shows the clear
// payload, still sanitised; leaving the message hides it.
func TestRevealAsksThenJournalsBeforeShowing(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	j := openJournal(t)
	h := newHarness(t, Options{Journal: j}, 120, 40)
	openM1001(h)
	h.mustNotShow("hunter2")
	h.press("reveal")
	if _, ok := h.m.c.dialog.(*revealConfirm); !ok {
		t.Fatalf("reveal opened %T, want its confirmation", h.m.c.dialog)
	}
	h.mustShow("Reveal the unredacted payload?", "ana@bastion")

	_, write := h.m.Update(keyPress("y")) // the journal command, not yet run
	h.mustNotShow("hunter2")
	if len(reveals(t, j)) != 0 {
		t.Fatal("journalled before the command ran")
	}
	msg := write()
	es := reveals(t, j)
	if len(es) != 1 {
		t.Fatalf("%d reveal entries, want 1", len(es))
	}
	e := es[0]
	if e.Actor != "ana@bastion" || e.Queue != "orders.dlq" || len(e.MessageIDs) != 1 || e.MessageIDs[0] != "m-1001" {
		t.Fatalf("entry %+v", e)
	}
	h.mustNotShow("hunter2") // the entry exists; the screen waits for its answer
	h.send(msg)
	h.mustShow("hunter2", "REVEALED", "ana@example.com")
	if !h.m.message.Revealed() {
		t.Fatal("not revealed")
	}
	h.mustShow(`\u001b[31mred`) // the sender's JSON escape, as text
	if strings.Contains(h.m.Screen(), "\x1b[31m") {
		t.Fatal("a payload escape reached the terminal")
	}

	h.press("back")
	h.press("open")
	h.mustNotShow("hunter2", "REVEALED")
}

// TestRevealRefusedWithoutJournal: no journal, no reveal, and the reason.
func TestRevealRefusedWithoutJournal(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{JournalErr: journal.ErrLocked}, 120, 40)
	openM1001(h)
	h.press("reveal")
	if h.m.c.dialog != nil {
		t.Fatalf("reveal opened %T without a journal", h.m.c.dialog)
	}
	h.mustShow("reveal refused: a reveal is journalled and journal is in use by another dlqt")
	h.mustNotShow("hunter2")
}

// TestRevealRefusedWhenTheEntryFails: a journal that cannot write means
// the payload stays masked.
func TestRevealRefusedWhenTheEntryFails(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	j := openJournal(t)
	h := newHarness(t, Options{Journal: j}, 120, 40)
	openM1001(h)
	h.press("reveal")
	j.Close() // the write will fail
	h.send(keyPress("y"))
	h.mustShow("reveal refused: the journal entry could not be written")
	h.mustNotShow("hunter2")
}

// TestReadOnlyRemovesWriteKeys: discard, replay and reveal are gone from the
// keymap and help; their keys only say "read-only mode".
func TestReadOnlyRemovesWriteKeys(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	j := openJournal(t)
	h := newHarness(t, Options{Journal: j, ReadOnly: true, ActionsOff: "read-only mode is on"}, 120, 40)
	k := h.m.c.Keys
	if k.Discard.Enabled() || k.Replay.Enabled() || k.Reveal.Enabled() || k.ResumeReplay.Enabled() {
		t.Fatal("a write action is still in the keymap")
	}
	openM1001(h)
	h.press("help")
	h.mustNotShow("discard", "replay", "reveal")
	for _, name := range []string{"x", "R", "v"} {
		h.send(keyPress(name))
		if h.m.c.dialog != nil {
			t.Fatalf("%s opened %T in read-only mode", name, h.m.c.dialog)
		}
		h.mustShow("read-only mode: discard, replay and reveal are off")
	}
	if len(reveals(t, j)) != 0 {
		t.Fatal("read-only mode journalled a reveal")
	}
	h.mustNotShow("hunter2")
	_ = triage.ReasonRejected
}

// The confirm dialogs spelt their keys three ways ("n/esc: cancel",
// "n/esc cancel", "esc: cancel"); every one says "key: what it does".
func TestRevealConfirmSpellsItsKeysAsTheOtherDialogs(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{Journal: openJournal(t)}, 80, 24)
	openM1001(h)
	h.press("reveal")
	h.mustShow("y: reveal    n/esc: cancel")
	h.mustNotShow("n/esc cancel")
}
