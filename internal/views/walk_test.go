package views

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/doctor"
)

// TestElideMiddleKeepsTheTail: ids of one kind share their start; the cut
// goes in the middle and the width is exact.
func TestElideMiddleKeepsTheTail(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"msg_shipment.track.updated-0042", 40, "msg_shipment.track.updated-0042"},
		{"msg_shipment.track.updated-0042", 25, "msg_shipment…updated-0042"},
		{"abcdef", 2, "ab"},
	} {
		got := ElideMiddle(c.in, c.w)
		if got != c.want || ansi.StringWidth(got) > c.w {
			t.Errorf("ElideMiddle(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
	if got := IDList([]string{"a", "b", "c", "d", "e"}, 80); got != "a, b, c and 2 more (5)" {
		t.Errorf("IDList = %q", got)
	}
}

// TestAttemptsOfDeathsThatWereNotDeliveries: maxlen and expiry are not
// failed deliveries; without a count they show "—", never 0.
func TestAttemptsOfDeathsThatWereNotDeliveries(t *testing.T) {
	for _, c := range []struct {
		reason   triage.Reason
		attempts int
		want     string
	}{
		{triage.ReasonMaxlen, 0, "—"}, {triage.ReasonExpired, 0, "—"},
		{triage.ReasonMaxlen, 2, "2"}, {triage.ReasonRejected, 0, "0"},
	} {
		var tr triage.Triaged
		tr.Reason, tr.Attempts = c.reason, c.attempts
		if got := AttemptsText(tr); got != c.want {
			t.Errorf("%s x%d: attempts %q, want %q", c.reason, c.attempts, got, c.want)
		}
	}
}

// TestQueuesMarkASourceTheDoctorSaysIsDropped: the queues screen never
// lists a dead-letter path the doctor denies without saying so.
func TestQueuesMarkASourceTheDoctorSaysIsDropped(t *testing.T) {
	q := NewQueues(testContext())
	q.SetSize(120, 10)
	q.SetDoctor([]doctor.Finding{{Kind: doctor.KindUnroutable, Severity: doctor.SeverityError, Queue: "orders.q"}})
	q.SetQueues([]triage.ParkingQueue{{Queue: triage.Queue{Name: "orders.parking"}, DeadLetteredFrom: []string{"orders.q", "orders.retry"}}}, nil)
	if v := ansi.Strip(q.View()); !strings.Contains(v, "orders.q (dropped!), orders.re") || !strings.Contains(v, "doctor: 1 error") {
		t.Fatalf("no dropped mark:\n%s", v)
	}
}

// TestJournalShowsADecisionWithItsOutcomeInOneRow: a discard's decision
// and outcome are one row, its outcome in a column.
func TestJournalShowsADecisionWithItsOutcomeInOneRow(t *testing.T) {
	j := NewJournal(testContext())
	j.SetSize(120, 60)
	e := func(seq uint64, step string, extra map[string]any) JournalEntry {
		d := map[string]any{"step": step}
		for k, v := range extra {
			d[k] = v
		}
		return JournalEntry{Seq: seq, Actor: "ana", Action: "discard", Queue: "orders.dlq", Reason: "dupes",
			MessageIDs: []string{"m-1", "m-2"}, Details: d}
	}
	j.SetEntries([]JournalEntry{e(1, "decision", nil), e(2, "outcome", map[string]any{"discarded": float64(2)}),
		{Seq: 3, Action: "tag", Queue: "orders.dlq", Reason: "x"}}, nil)
	if j.table.Total() != 2 {
		t.Fatalf("%d rows, want the discard as one and the tag", j.table.Total())
	}
	v := ansi.Strip(j.View())
	if !strings.Contains(v, "discarded 2") || !strings.Contains(v, "3 entries") {
		t.Fatalf("journal screen:\n%s", v)
	}
	j.table.Select(1) // the discard (newest first: the tag is row 0)
	j.Open()
	if v := ansi.Strip(j.View()); !strings.Contains(v, "entry 1") || !strings.Contains(v, "entry 2") {
		t.Fatalf("the open row lacks its decision or outcome:\n%s", v)
	}
}
