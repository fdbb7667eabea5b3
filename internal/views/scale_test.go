package views

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
)

func TestShortNumber(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0", "0"},
		{"999", "999"},
		{"1,000", "1k"},
		{"1,234", "1.2k"},
		{"12,345", "12k"},
		{"100,000", "100k"},
		{"999,999", "999k"}, // rounded down: never more than there is
		{"1,234,567", "1.2M"},
		{"1,000,000", "1M"},
		{"12,500,000", "12M"},
		{"3,400,000,000", "3.4G"},
		{"-1,500", "-1.5k"},
		{"100,000 · settling", "100k · settling"},
		{"?", "?"},
		{"3/5", "3/5"},
	} {
		if got := ShortNumber(c.in); got != c.want {
			t.Errorf("ShortNumber(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestQueueDepthIsNeverCut: a depth of 100,000 shows whole at 120 columns
// (it was "100,0…"), and where the line is too narrow for it whole it is
// written short, never cut.
func TestQueueDepthIsNeverCut(t *testing.T) {
	in := []triage.ParkingQueue{
		{Queue: triage.Queue{Name: "orders.parking-lot.incident-2026", Messages: 100_000, Consumers: 0},
			DeadLetteredFrom: []string{"orders", "orders.retry"}},
		{Queue: triage.Queue{Name: "a.dlq", Messages: 1_234_567}},
	}
	q := NewQueues(testContext())
	q.SetSize(120, 10)
	q.SetQueues(in, nil)
	v := ansi.Strip(q.View())
	for _, want := range []string{"100,000", "1,234,567"} {
		if !strings.Contains(v, want) {
			t.Errorf("120 columns: depth %s not whole:\n%s", want, v)
		}
	}
	if strings.Contains(v, "…") && strings.Contains(v, "100,0…") {
		t.Errorf("depth cut:\n%s", v)
	}
	q.SetSize(52, 10)
	v = ansi.Strip(q.View())
	if !strings.Contains(v, "100k") || !strings.Contains(v, "1.2M") {
		t.Errorf("52 columns: depths not written short:\n%s", v)
	}
	if strings.Contains(v, "100,0…") || strings.Contains(v, "1,23…") {
		t.Errorf("52 columns: a depth is cut:\n%s", v)
	}
	for i, l := range strings.Split(v, "\n") {
		if n := ansi.StringWidth(l); n > 52 {
			t.Errorf("line %d is %d cells: %q", i, n, l)
		}
	}
}

// TestTableFormatsOnlyTheRowsItDraws: a frame of a million rows formats
// the few it shows, and moving to the end does not read the rest.
func TestTableFormatsOnlyTheRowsItDraws(t *testing.T) {
	tb := newTable(testContext(), []Column{{Title: "id", Width: 10, Flex: 1}, {Title: "n", Width: 3, Right: true}})
	tb.SetSize(60, 11) // header + 10 rows
	formatted := 0
	tb.SetSource(1_000_000, func(i int) []string {
		formatted++
		return []string{fmt.Sprintf("m-%07d", i), Count(i * 10)}
	})
	if formatted != 0 {
		t.Fatalf("SetSource formatted %d rows", formatted)
	}
	tb.move(1_000_000)
	v := tb.View()
	if formatted > 10 {
		t.Fatalf("one frame formatted %d rows, want at most the 10 drawn", formatted)
	}
	if !strings.Contains(v, "› m-0999999") || !strings.Contains(v, "9,999,990") {
		t.Fatalf("the last row is not drawn whole:\n%s", v)
	}
	if i, _ := tb.Selected(); i != 999_999 || tb.Len() != 1_000_000 || !tb.Shown(500_000) {
		t.Fatalf("selected %d of %d", i, tb.Len())
	}
}

// TestTableFilterOverSourceKeepsIndexes: a field filter over a virtual
// table keeps the caller's indexes; Select and Shown find rows by them.
func TestTableFilterOverSourceKeepsIndexes(t *testing.T) {
	tb := newManagedTable(testContext(), []Column{{Title: "id", Width: 10, Flex: 1}})
	tb.SetSize(40, 6)
	tb.SetSource(1000, func(i int) []string { return []string{fmt.Sprintf("m-%d", i)} })
	tb.filterBy(func(row int) bool { return row%100 == 7 })
	if tb.Len() != 10 || !tb.Shown(907) || tb.Shown(908) {
		t.Fatalf("filter kept %d rows", tb.Len())
	}
	tb.Select(507)
	if i, _ := tb.Selected(); i != 507 {
		t.Fatalf("selected %d, want 507", i)
	}
	tb.Select(508) // not shown: the cursor stays
	if i, _ := tb.Selected(); i != 507 {
		t.Fatalf("selected %d after selecting a hidden row", i)
	}
}

// millionMessages is one group of n messages, as the engine hands it.
func millionMessages(n int) (*triage.Inspection, triage.Group) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	insp := &triage.Inspection{Batch: triage.Batch{Queue: "orders.dlq", Depth: n}}
	insp.Messages = make([]triage.Triaged, n)
	g := triage.Group{Reason: triage.Reason("rejected"), ReasonCode: "E42", Count: n, Members: make([]int, n)}
	for i := range insp.Messages {
		insp.Messages[i] = triage.Triaged{ID: fmt.Sprintf("msg_order-%07d", i), Attempts: i % 7,
			DiedAt: at.Add(time.Duration(i) * time.Millisecond), ReasonCode: "E42"}
		g.Members[i] = i
	}
	return insp, g
}

// TestMessagesMarksInAMillionRowGroup: marking reads the marks, not the
// group, and the marked come back in queue order.
func TestMessagesMarksInAMillionRowGroup(t *testing.T) {
	insp, g := millionMessages(1_000_000)
	m := NewMessages(testContext())
	m.SetSize(120, 30)
	m.Open(insp, g, nil)
	m.table.Select(999_998)
	m.ToggleMark()
	m.table.Select(3)
	m.ToggleMark()
	got := m.Marked()
	if len(got) != 2 || got[0] != "msg_order-0000003" || got[1] != "msg_order-0999998" {
		t.Fatalf("marked %v", got)
	}
	if v := m.View(); !strings.Contains(v, "2 marked") || !strings.Contains(v, "1,000,000 messages") {
		t.Fatalf("title:\n%s", v)
	}
}

// BenchmarkMessagesFrame1M is one frame of the messages screen over a
// group of 1,000,000 messages, the cursor in the middle (target < 5 ms).
func BenchmarkMessagesFrame1M(b *testing.B) {
	insp, g := millionMessages(1_000_000)
	m := NewMessages(testContext())
	m.SetSize(120, 40)
	m.Open(insp, g, nil)
	m.table.Select(500_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m.table.move(1)
		_ = m.View()
	}
}

// BenchmarkMessagesOpen1M is opening that group and drawing it.
func BenchmarkMessagesOpen1M(b *testing.B) {
	insp, g := millionMessages(1_000_000)
	m := NewMessages(testContext())
	m.SetSize(120, 40)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m.Open(insp, g, nil)
		_ = m.View()
	}
}

// TestTypingNarrowsWithinWhatMatched: a substring that extends the last one
// searches only the rows that matched it; one that does not (a backspace)
// searches them all again; new rows do too.
func TestTypingNarrowsWithinWhatMatched(t *testing.T) {
	tb := newTable(testContext(), []Column{{Title: "id", Width: 10, Flex: 1}})
	tb.SetSize(40, 6)
	formatted := 0
	tb.SetSource(10_000, func(i int) []string { formatted++; return []string{fmt.Sprintf("m-%05d", i)} })
	tb.SetSubstring("m-0")
	if tb.Len() != 10_000 || formatted != 10_000 {
		t.Fatalf("m-0: %d rows, %d formatted", tb.Len(), formatted)
	}
	formatted = 0
	tb.SetSubstring("m-01")
	if tb.Len() != 1000 || formatted != 10_000 {
		t.Fatalf("m-01: %d rows, %d formatted", tb.Len(), formatted)
	}
	formatted = 0
	tb.SetSubstring("m-012")
	if tb.Len() != 100 || formatted != 1000 {
		t.Fatalf("m-012: %d rows, %d formatted: want only the 1,000 that matched m-01", tb.Len(), formatted)
	}
	tb.SetSubstring("m-01") // a backspace
	if tb.Len() != 1000 {
		t.Fatalf("after a backspace: %d rows", tb.Len())
	}
	tb.SetSubstring("m-01")
	tb.SetSource(20_000, func(i int) []string { return []string{fmt.Sprintf("x-%05d", i)} })
	tb.SetSubstring("x-01") // extends nothing the new rows were searched for
	if tb.Len() != 1000 {
		t.Fatalf("new rows: %d, want the 1,000 x-01xxx", tb.Len())
	}
}

// BenchmarkTypingOverAMillionRows is the filter after each key of "m-0999"
// over 1,000,000 rows.
func BenchmarkTypingOverAMillionRows(b *testing.B) {
	tb := newManagedTable(testContext(), []Column{{Title: "id", Width: 10, Flex: 1}, {Title: "n", Width: 3, Right: true}})
	tb.SetSize(120, 40)
	tb.SetSource(1_000_000, func(i int) []string { return []string{fmt.Sprintf("m-%07d", i), Count(i)} })
	b.ResetTimer()
	for b.Loop() {
		for _, q := range []string{"m", "m-", "m-0", "m-09", "m-099", "m-0999"} {
			tb.SetSubstring(q)
		}
		tb.SetSubstring("")
	}
}
