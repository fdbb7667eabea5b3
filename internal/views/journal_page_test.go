package views

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// An older page folds an outcome already shown into its decision, which
// only that page holds, and the selection stays on the entry it was on.
func TestJournalOlderPageFoldsAcrossTheBoundaryAndKeepsTheSelection(t *testing.T) {
	j := NewJournal(testContext())
	j.SetSize(120, 8)
	tag := func(seq uint64) JournalEntry {
		return JournalEntry{Seq: seq, Actor: "ana", Action: "tag", Queue: "orders.dlq", Reason: "t"}
	}
	step := func(seq uint64, s string) JournalEntry {
		d := map[string]any{"step": s}
		if s == "outcome" {
			d["discarded"] = float64(2)
		}
		return JournalEntry{Seq: seq, Actor: "ana", Action: "discard", Queue: "orders.dlq", Reason: "dupes", Details: d}
	}
	// entries 5-8 of 8: the outcome (5) of a decision (4) not read yet
	j.SetPage([]JournalEntry{step(5, "outcome"), tag(6), tag(7), tag(8)}, 8)
	if v := ansi.Strip(j.View()); !strings.Contains(v, "8 entries (newest 4 read)") {
		t.Fatalf("title:\n%s", v)
	}
	if j.table.Total() != 4 || j.Oldest() != 5 {
		t.Fatalf("%d rows, oldest %d", j.table.Total(), j.Oldest())
	}
	j.table.Select(1) // entry 7
	if !j.WantsOlder() {
		t.Error("a selection a screen from the oldest read does not ask for older entries")
	}
	j.AddOlder([]JournalEntry{tag(1), tag(2), tag(3), step(4, "decision")})
	if j.table.Total() != 7 || j.Oldest() != 1 {
		t.Fatalf("%d rows (want 7: the outcome folded), oldest %d", j.table.Total(), j.Oldest())
	}
	if i, _ := j.table.Selected(); j.entries[i].Seq != 7 {
		t.Errorf("selection moved to entry %d, want 7", j.entries[i].Seq)
	}
	v := ansi.Strip(j.View())
	if !strings.Contains(v, "discarded 2") || strings.Contains(v, "newest") {
		t.Fatalf("after the older page:\n%s", v)
	}
	j.table.Select(j.table.Total() - 1)
	if j.WantsOlder() {
		t.Error("asks for entries older than entry 1")
	}
}
