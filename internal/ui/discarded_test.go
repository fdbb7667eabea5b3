package ui

import (
	"slices"
	"testing"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// A message the journal says was discarded, met again by a browse (its
// ack was never applied before a broker restart), is marked in the list and
// on the message screen with the entry that discarded it.
func TestAMessageDiscardedInTheJournalIsMarkedWhenItIsBack(t *testing.T) {
	h, j := liveHarness(t, 140, 40)
	e, err := j.Append(journal.Entry{Action: triage.ActionDiscard, Vhost: "shop", Queue: "orders.dlq", MessageIDs: []string{"m-1002"},
		Reason: "fixed upstream", Details: map[string]any{"step": "outcome"}})
	if err != nil {
		t.Fatal(err)
	}
	if e.Seq != 1 {
		t.Fatalf("seq %d", e.Seq)
	}
	openInvalidSKU(h)
	h.mustShow("discarded in journal") // the list's tags column clips it
	h.press("down")
	h.press("open")
	h.mustShow("m-1002", "discarded in journal #1, back")
}

// A message a discard selected whose dlqt was killed before the outcome
// is marked as still here, with the entry that selected it.
func TestAMessageOfAnInterruptedDiscardIsMarked(t *testing.T) {
	h, j := liveHarness(t, 140, 40)
	for _, step := range []string{"decision", "selected"} {
		var ids []string
		if step == "selected" {
			ids = []string{"m-1002"}
		}
		if _, err := j.Append(journal.Entry{Action: triage.ActionDiscard, Vhost: "shop", Queue: "orders.dlq", MessageIDs: ids,
			Reason: "fixed upstream", Details: map[string]any{"step": step}}); err != nil {
			t.Fatal(err)
		}
	}
	openInvalidSKU(h)
	h.press("down")
	h.press("open")
	h.mustShow("m-1002", "selected by discard #2, interrupted: still here")
}

// A message back after a verified discard (a broker crash undid the ack)
// is offered the same discard again: its reason filled in, journaled as a
// retry of that discard. Only the headless `discard --retry SEQ` did this.
func TestAMessageBackAfterADiscardIsOfferedTheSameDiscardAgain(t *testing.T) {
	h, j := liveHarness(t, 140, 40)
	if _, err := j.Append(journal.Entry{Action: triage.ActionDiscard, Vhost: "shop", Queue: "orders.dlq", MessageIDs: []string{"m-1002"},
		Reason: "fixed upstream in INC-7", Details: map[string]any{"step": "outcome"}}); err != nil {
		t.Fatal(err)
	}
	openInvalidSKU(h)
	h.press("down")
	h.press("open")
	h.mustShow("m-1002", "discarded in journal #1, back")
	h.press("discard")
	if _, ok := h.m.c.dialog.(*reasonPrompt); !ok {
		t.Fatalf("no reason prompt, dialog = %T", h.m.c.dialog)
	}
	h.mustShow("Discarded in journal #1, and back", "reason: fixed upstream in INC-7")
	h.press("open")
	d, ok := h.m.c.dialog.(*discardConfirm)
	if !ok || d.retryOf != 1 {
		t.Fatalf("confirmation %T %+v, want a retry of #1", h.m.c.dialog, d)
	}
	h.mustShow("retry of  journal entry #1", "reason    fixed upstream in INC-7")
	h.press("confirm")
	if got := h.reader.ids("orders.dlq"); slices.Contains(got, "m-1002") {
		t.Fatalf("m-1002 is still in the queue: %v", got)
	}
	es, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var retried int
	for _, e := range es[1:] {
		if e.Action == triage.ActionDiscard && e.Details["retry_of"] == float64(1) && e.Reason == "fixed upstream in INC-7" {
			retried++
		}
	}
	if retried == 0 {
		t.Fatalf("no discard journaled as a retry of #1: %+v", es)
	}
}

// A changed reason makes it a new decision, not a retry; a message not
// back is not offered one.
func TestARetryWithAnotherReasonIsANewDiscard(t *testing.T) {
	h, j := liveHarness(t, 140, 40)
	if _, err := j.Append(journal.Entry{Action: triage.ActionDiscard, Vhost: "shop", Queue: "orders.dlq", MessageIDs: []string{"m-1002"},
		Reason: "fixed upstream", Details: map[string]any{"step": "outcome"}}); err != nil {
		t.Fatal(err)
	}
	openInvalidSKU(h)
	h.press("discard") // m-1001, not back
	h.mustNotShow("and back")
	h.send(keyPress("esc"))
	h.press("down")
	h.press("discard")
	h.mustShow("and back")
	h.typeText(" again")
	h.press("open")
	if d, ok := h.m.c.dialog.(*discardConfirm); !ok || d.retryOf != 0 {
		t.Fatalf("a changed reason is still a retry: %T %+v", h.m.c.dialog, d)
	}
	h.mustNotShow("retry of")
}
