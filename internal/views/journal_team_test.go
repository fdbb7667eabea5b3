package views

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// On the team's trail a record that counts for nothing (forged, out of
// its chain, an attempt its writer replaced) says so on its row, and is
// never taken as the outcome of a decision: a forged "discarded 2" must
// not close a decision that never ran.
func TestATeamRecordThatDoesNotCountSaysSo(t *testing.T) {
	j := NewJournal(testContext())
	j.SetSize(120, 10)
	step := func(seq uint64, s, void string) JournalEntry {
		d := map[string]any{"step": s}
		if s == "outcome" {
			d["discarded"] = float64(2)
		}
		return JournalEntry{Seq: seq, Actor: "ana", Host: "h1", Action: "discard", Queue: "orders.dlq", Reason: "dupes",
			Details: d, Writer: "ana@h1:/j", Offset: int64(seq), Void: void}
	}
	j.SetTeam("dlqt.audit", []JournalEntry{
		step(1, "decision", ""),
		step(2, "outcome", "its hash is not its content's: forged"),
	}, "2 records of 1 writer", true)
	v := ansi.Strip(j.View())
	if !strings.Contains(v, "NOT COUNTED") {
		t.Fatalf("the forged outcome's row does not say it counts for nothing:\n%s", v)
	}
	if strings.Contains(v, "discarded 2") || !strings.Contains(v, "no outcome") {
		t.Fatalf("the decision took the forged outcome as its own:\n%s", v)
	}
	j.table.Select(0) // newest first: the forged outcome
	if !j.Open() {
		t.Fatal("the selected record does not open")
	}
	if v := ansi.Strip(j.View()); !strings.Contains(v, "NO: its hash is not its content's: forged") {
		t.Fatalf("the record's detail does not say why it does not count:\n%s", v)
	}
}
