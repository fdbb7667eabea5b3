package ui

import (
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
