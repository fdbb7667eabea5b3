package views

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/triagetest"
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
	q.SetSize(46, 10) // every column that gives way is gone, and still too narrow
	v = ansi.Strip(q.View())
	if !strings.Contains(v, "100k") || !strings.Contains(v, "1.2M") {
		t.Errorf("46 columns: depths not written short:\n%s", v)
	}
	if strings.Contains(v, "100,0…") || strings.Contains(v, "1,23…") {
		t.Errorf("46 columns: a depth is cut:\n%s", v)
	}
	for i, l := range strings.Split(v, "\n") {
		if n := ansi.StringWidth(l); n > 46 {
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
	for i := range triagetest.Messages(insp) {
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
	search := func(q string) {
		tb.SetSubstring(q)
		tb.Settle()
	}
	search("m-0")
	if tb.Len() != 10_000 || formatted != 10_000 {
		t.Fatalf("m-0: %d rows, %d formatted", tb.Len(), formatted)
	}
	formatted = 0
	search("m-01")
	if tb.Len() != 1000 || formatted != 10_000 {
		t.Fatalf("m-01: %d rows, %d formatted", tb.Len(), formatted)
	}
	formatted = 0
	search("m-012")
	if tb.Len() != 100 || formatted != 1000 {
		t.Fatalf("m-012: %d rows, %d formatted: want only the 1,000 that matched m-01", tb.Len(), formatted)
	}
	search("m-01") // a backspace
	if tb.Len() != 1000 {
		t.Fatalf("after a backspace: %d rows", tb.Len())
	}
	search("-01")
	formatted = 0
	search("m-01") // contains the last, though not as a prefix: still within what matched
	if tb.Len() != 1000 || formatted != 1000 {
		t.Fatalf("m-01 after -01: %d rows, %d formatted: want only the 1,000 that matched -01", tb.Len(), formatted)
	}
	search("m-01")
	tb.SetSource(20_000, func(i int) []string { return []string{fmt.Sprintf("x-%05d", i)} })
	search("x-01") // extends nothing the new rows were searched for
	if tb.Len() != 1000 {
		t.Fatalf("new rows: %d, want the 1,000 x-01xxx", tb.Len())
	}
}

// TestTypingNarrowsWithinAnUnfinishedSearch: a key typed before the last
// search ended searches what it matched so far and what it had not reached
// yet, nothing else, and ends with the exact set.
func TestTypingNarrowsWithinAnUnfinishedSearch(t *testing.T) {
	tb := newTable(testContext(), []Column{{Title: "id", Width: 10, Flex: 1}})
	tb.SetSize(40, 6)
	tb.stepRows = 4000
	formatted := 0
	tb.SetSource(10_000, func(i int) []string { formatted++; return []string{fmt.Sprintf("m-%05d", i)} })
	tb.SetSubstring("m-01") // rows 0..3999 tested: 1,000 matched, 6,000 untested
	if !tb.Searching() || tb.Len() != 1000 || formatted != 4000 {
		t.Fatalf("m-01 after one step: %d matched, %d formatted", tb.Len(), formatted)
	}
	formatted = 0
	tb.Settle()
	tb.SetSubstring("m-012")
	tb.Settle()
	if tb.Len() != 100 || formatted != 6000+1000 {
		t.Fatalf("m-012: %d rows, %d formatted: want the 1,000 matched and the 6,000 untested", tb.Len(), formatted)
	}
}

// TestTypingAnswersAKeyWithASlice: at a million rows a key tests one slice
// of rows, the screen says the count is still coming, the rest comes in
// steps through SearchCmd, and a step of a search a later key replaced
// does nothing.
func TestTypingAnswersAKeyWithASlice(t *testing.T) {
	tb := newManagedTable(testContext(), []Column{{Title: "id", Width: 10, Flex: 1}})
	tb.SetSize(80, 11)
	tb.stepRows = 100_000
	formatted := 0
	tb.SetSource(1_000_000, func(i int) []string { formatted++; return []string{fmt.Sprintf("m-%07d", i)} })
	tb.StartFilter()
	tb.SetSubstring("m-09")
	if formatted != 100_000 || tb.Len() != 0 || !tb.Searching() {
		t.Fatalf("m-09: %d formatted, %d matched", formatted, tb.Len())
	}
	if v := ansi.Strip(tb.View()); !strings.Contains(v, "searching… 0 matched so far of 1,000,000") {
		t.Fatalf("no searching line:\n%s", v)
	}
	stale := tb.SearchCmd()
	if stale == nil || tb.SearchCmd() != nil {
		t.Fatal("want one step command while the search runs, not two")
	}
	tb.SetSubstring("m-099") // the next key cancels that search
	formatted = 0
	stale().(SearchStep).Continue()
	if formatted != 0 {
		t.Fatalf("a stale step formatted %d rows", formatted)
	}
	steps := 0
	for cmd := tb.SearchCmd(); cmd != nil; cmd = tb.SearchCmd() {
		cmd().(SearchStep).Continue()
		steps++
	}
	// m-09 had tested rows 0..99,999 and matched none: m-099 tests the
	// 900,000 it had not reached, its first slice in the key, then 8 steps
	if tb.Searching() || tb.Len() != 10_000 || steps != 8 || formatted != 800_000 {
		t.Fatalf("m-099: %d matched in %d steps (%d rows formatted), searching %v", tb.Len(), steps, formatted, tb.Searching())
	}
	if v := ansi.Strip(tb.View()); !strings.Contains(v, "(10,000 of 1,000,000)") || !strings.Contains(v, "m-0990000") {
		t.Fatalf("final count or first match not drawn:\n%s", v)
	}
}

// TestSearchKeepsTheSelectionAndAnswersShownExactly: new rows under a
// filter keep the selected row, found by a later step; Shown and Select
// are exact while the search has not reached a row.
func TestSearchKeepsTheSelectionAndAnswersShownExactly(t *testing.T) {
	tb := newManagedTable(testContext(), []Column{{Title: "id", Width: 10, Flex: 1}})
	tb.SetSize(40, 6)
	src := func(i int) []string { return []string{fmt.Sprintf("m-%05d", i)} }
	tb.SetSource(50_000, src)
	tb.SetSubstring("7")
	tb.Settle()
	tb.Select(49_997)
	tb.stepRows = 5000
	tb.SetSource(50_000, src) // the same rows again (a refresh)
	if !tb.Searching() || !tb.Shown(49_997) || tb.Shown(49_998) || !tb.Shown(7) || tb.Shown(8) {
		t.Fatalf("Shown not exact while searching (%d matched)", tb.Len())
	}
	if i, ok := tb.Selected(); ok && i == 49_997 {
		t.Fatal("selected a row the search has not reached")
	}
	tb.Settle()
	if i, _ := tb.Selected(); i != 49_997 {
		t.Fatalf("selected %d after the search, want 49997", i)
	}
	tb.SetSubstring("m-1")
	tb.Select(17_000) // not reached yet: selected once found
	tb.Settle()
	if i, _ := tb.Selected(); i != 17_000 {
		t.Fatalf("selected %d, want 17000", i)
	}
}

// plainScan is the filter as it always was: every row formatted, joined,
// lowered and searched.
func plainScan(n int, row func(int) []string, match func(int) bool, q string) []int {
	q = strings.ToLower(q)
	var out []int
	for i := range n {
		if match != nil && !match(i) {
			continue
		}
		if q == "" || strings.Contains(strings.ToLower(strings.Join(row(i), " ")), q) {
			out = append(out, i)
		}
	}
	return out
}

// FuzzSearchEqualsAPlainScan: whatever is typed, however the steps fall
// between keys and whatever rows come, the rows found so far are always the
// first of the plain scan's, Shown agrees with it at once, and once the
// search ends the rows are exactly the plain scan's.
func FuzzSearchEqualsAPlainScan(f *testing.F) {
	f.Add(uint64(1), []byte("ab\x7fA\x01b\x02\x7f\x03c"))
	f.Add(uint64(7), []byte("k\x01K\x02i\x7f\x7fI\x03"))
	f.Add(uint64(42), []byte("a\x04b\x05\x06x\x7fy"))
	f.Fuzz(searchAgainstAPlainScan)
}

// TestSearchEqualsAPlainScan runs the fuzz target's checks over scripts of
// random keys, steps and refreshes.
func TestSearchEqualsAPlainScan(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	ops := []byte{'a', 'b', 'k', 'i', 0xc4, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x7f, 0x7f, 0x00, 0x00}
	for range 100 {
		script := make([]byte, 5+r.IntN(30))
		for i := range script {
			script[i] = ops[r.IntN(len(ops))]
		}
		searchAgainstAPlainScan(t, r.Uint64(), script)
	}
}

func searchAgainstAPlainScan(t *testing.T, seed uint64, script []byte) {
	r := rand.New(rand.NewPCG(seed, 3))
	alphabet := []string{"a", "b", "A", "B", "k", "K", "İ", "i", "\u212a", " ", "-", "é", "É", "\xff"}
	makeRows := func(n int) [][]string {
		out := make([][]string, n)
		for i := range out {
			cells := make([]string, 1+r.IntN(3))
			for c := range cells {
				var b strings.Builder
				for range r.IntN(6) {
					b.WriteString(alphabet[r.IntN(len(alphabet))])
				}
				cells[c] = b.String()
			}
			out[i] = cells
		}
		return out
	}
	data := makeRows(r.IntN(3000))
	row := func(i int) []string { return data[i] }
	tb := newManagedTable(testContext(), []Column{{Title: "a", Width: 5, Flex: 1}})
	tb.SetSize(40, 8)
	tb.stepRows = 1 + r.IntN(400)
	tb.SetSource(len(data), row)
	q := ""
	var match func(int) bool
	check := func(when string) {
		want := plainScan(len(data), row, match, q)
		got := tb.visible
		if !tb.filtered() {
			got = nil
			for i := range tb.Len() {
				got = append(got, i)
			}
		}
		if len(got) > len(want) || !slices.Equal(got, want[:len(got)]) || (!tb.Searching() && len(got) != len(want)) {
			t.Fatalf("%s, query %q over %d rows: found %d rows, searching %v, plain scan %d", when, q, len(data), len(got), tb.Searching(), len(want))
		}
		for range 5 {
			if len(data) == 0 {
				break
			}
			i := r.IntN(len(data))
			if _, in := slices.BinarySearch(want, i); tb.Shown(i) != in {
				t.Fatalf("%s, query %q: Shown(%d) = %v, plain scan %v", when, q, i, !in, in)
			}
		}
		if tb.Len() > 0 {
			if _, ok := tb.Selected(); !ok {
				t.Fatalf("%s: nothing selected among %d rows", when, tb.Len())
			}
		}
	}
	if len(script) > 40 {
		script = script[:40]
	}
	for _, c := range script {
		switch {
		case c == 0x7f: // backspace
			if q != "" {
				_, size := utf8.DecodeLastRuneInString(q)
				q = q[:len(q)-size]
			}
			tb.SetSubstring(q)
			match = nil
		case c < 0x03: // steps before the next key
			for range int(c) + 1 {
				if cmd := tb.SearchCmd(); cmd != nil {
					cmd().(SearchStep).Continue()
				}
				check("after a step")
			}
		case c == 0x03:
			tb.Settle()
		case c == 0x04: // new rows (a refresh)
			data = makeRows(r.IntN(3000))
			tb.SetSource(len(data), row)
		case c == 0x05: // a field filter
			k := 2 + r.IntN(5)
			match = func(i int) bool { return i%k == 0 }
			q = ""
			tb.filterBy(match)
		case c == 0x06:
			tb.move(r.IntN(200) - 100)
		default:
			q += alphabet[int(c)%len(alphabet)]
			tb.SetSubstring(q)
			match = nil
		}
		check("after " + strconv.Quote(string(c)))
	}
	tb.Settle()
	check("at the end")
}

// BenchmarkTypingOverAMillionRows is the filter after each key of "m-0999"
// over 1,000,000 rows, each key's search run to its end (the exact count):
// the whole work of typing slowly. ms/key and max-ms/key are the part of
// it in each key's Update (target < 16 ms).
func BenchmarkTypingOverAMillionRows(b *testing.B) {
	benchmarkTyping(b, true)
}

// BenchmarkTypingKeyOverAMillionRows is the keys of "m-0999" over
// 1,000,000 rows typed faster than the search: each key replaces the
// search of the one before. ms/key and max-ms/key are each key's Update.
func BenchmarkTypingKeyOverAMillionRows(b *testing.B) {
	benchmarkTyping(b, false)
}

var typed = []string{"m", "m-", "m-0", "m-09", "m-099", "m-0999"}

func benchmarkTyping(b *testing.B, settle bool) {
	tb := newManagedTable(testContext(), []Column{{Title: "id", Width: 10, Flex: 1}, {Title: "n", Width: 3, Right: true}})
	tb.SetSize(120, 40)
	tb.SetSource(1_000_000, func(i int) []string { return []string{fmt.Sprintf("m-%07d", i), Count(i)} })
	var worst, total time.Duration
	keys := 0
	b.ReportAllocs()
	for b.Loop() {
		for _, q := range typed {
			start := time.Now()
			tb.SetSubstring(q)
			took := time.Since(start)
			worst, total, keys = max(worst, took), total+took, keys+1
			if settle {
				tb.Settle()
			}
		}
		tb.SetSubstring("")
	}
	b.ReportMetric(float64(worst)/float64(time.Millisecond), "max-ms/key")
	b.ReportMetric(float64(total)/float64(keys)/float64(time.Millisecond), "ms/key")
}

// BenchmarkGroupsFieldFilter1M is a field filter put in force on the groups
// screen of 1,000,000 messages: every message matched and regrouped. "key"
// is the part in the key's Update, "settled" the whole (then cleared).
func BenchmarkGroupsFieldFilter1M(b *testing.B) {
	insp, _ := millionMessages(1_000_000)
	insp.Groups = triage.GroupMessages(insp.Messages)
	g := NewGroups(testContext())
	g.SetSize(120, 40)
	g.Open("orders.dlq")
	g.SetInspection(insp)
	f, err := filter.ParseLine("reason_code=E42", filter.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("key", func(b *testing.B) { // what the key's Update does
		for b.Loop() {
			g.SetFilter(f)
		}
	})
	b.Run("settled", func(b *testing.B) { // to the filter in force
		for b.Loop() {
			g.SetFilter(f)
			for cmd := g.SearchCmd(); cmd != nil; cmd = g.SearchCmd() {
				cmd().(SearchStep).Continue()
			}
			g.SetFilter(filter.Filter{})
		}
	})
}

// manyMessages are n messages of several reasons, codes and event types.
func manyMessages(n int) *triage.Inspection {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	reasons := []triage.Reason{triage.ReasonRejected, triage.ReasonExpired, triage.ReasonMaxlen}
	insp := &triage.Inspection{Batch: triage.Batch{Queue: "orders.dlq", Depth: n}}
	insp.Messages = make([]triage.Triaged, n)
	for i := range triagetest.Messages(insp) {
		insp.Messages[i] = triage.Triaged{ID: fmt.Sprintf("m-%07d", i), Attempts: i % 7,
			Reason: reasons[i%3], ReasonCode: fmt.Sprintf("E%d", i%5),
			DiedAt:   at.Add(-time.Duration(i) * time.Second),
			Envelope: triage.Envelope{EventType: fmt.Sprintf("order.%d", i%4)}}
	}
	insp.Groups = triage.GroupMessages(insp.Messages)
	return insp
}

// TestGroupsFieldFilterInStepsEqualsNarrow: a field filter over many
// messages is put in force in steps; meanwhile the filter in force and its
// groups stay (what an action takes) and the screen says how far it got;
// a step of a filter replaced does nothing; the end is filter.Narrow's.
func TestGroupsFieldFilterInStepsEqualsNarrow(t *testing.T) {
	ctx := testContext()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ctx.Now = func() time.Time { return now }
	all := manyMessages(30_000)
	g := NewGroups(ctx)
	g.SetSize(120, 20)
	g.Open("orders.dlq")
	g.SetInspection(all)
	g.stepRows = 7000
	parse := func(line string) filter.Filter {
		f, err := filter.ParseLine(line, filter.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, line := range []string{"reason_code=E3", "reason=expired event_type=order.1", "died<2h", "reason_code=none"} {
		f := parse(line)
		before, beforeFilter := g.Inspection(), g.Filter()
		g.SetFilter(f)
		if !g.Narrowing() || g.Inspection() != before || g.Filter().String() != beforeFilter.String() {
			t.Fatalf("%s: after one step the filter in force changed", line)
		}
		if v := ansi.Strip(g.View()); !strings.Contains(v, "filtering by "+f.String()+": 7,000 of 30,000 messages tested") {
			t.Fatalf("%s: no progress line:\n%s", line, v)
		}
		stale := g.SearchCmd()
		g.SetFilter(f) // typed again: the step above is stale
		stale().(SearchStep).Continue()
		steps := 0
		for cmd := g.SearchCmd(); cmd != nil; cmd = g.SearchCmd() {
			cmd().(SearchStep).Continue()
			steps++
		}
		want := f.Narrow(*all)
		got := g.Inspection()
		if steps != 4 || g.Narrowing() || g.Filter().String() != f.String() {
			t.Fatalf("%s: %d steps, narrowing %v, filter %q", line, steps, g.Narrowing(), g.Filter())
		}
		if !reflect.DeepEqual(triagetest.Messages(got), want.Messages) || !reflect.DeepEqual(got.Groups, want.Groups) {
			t.Fatalf("%s: %d messages in %d groups, Narrow has %d in %d", line, got.Len(), len(got.Groups), len(want.Messages), len(want.Groups))
		}
	}
	// a read arriving while a filter is put in force: the filter typed last
	// narrows it, in steps too; the read before stays on screen until then
	f := parse("reason_code=E1")
	g.SetFilter(f)
	before := g.Inspection()
	fresh := manyMessages(20_000)
	fresh.Batch.Queue = "orders.dlq" // the same queue, read again
	g.SetInspection(fresh)
	if !g.Narrowing() || g.Inspection() != before || g.NewRead() {
		t.Fatalf("new read: narrowing %v, shown replaced %v", g.Narrowing(), g.Inspection() != before)
	}
	if v := ansi.Strip(g.View()); !strings.Contains(v, "filtering the new read by reason_code=E1: 7,000 of 20,000 messages tested") {
		t.Fatalf("no progress line for the new read:\n%s", v)
	}
	for cmd := g.SearchCmd(); cmd != nil; cmd = g.SearchCmd() {
		cmd().(SearchStep).Continue()
	}
	want := f.Narrow(*fresh)
	if g.Narrowing() || g.Filter().String() != f.String() || !reflect.DeepEqual(g.Inspection().Groups, want.Groups) {
		t.Fatalf("new read under a filter being put in force: narrowing %v, filter %q", g.Narrowing(), g.Filter())
	}
	if !g.NewRead() || g.NewRead() {
		t.Fatal("NewRead is not true exactly once after the new read came on screen")
	}
	// a read narrowed within the call needs no telling
	g.stepRows = 0
	g.SetInspection(manyMessages(100))
	if g.Narrowing() || g.NewRead() || g.Inspection().Len() != 20 {
		t.Fatalf("small read: narrowing %v, %d messages", g.Narrowing(), g.Inspection().Len())
	}
}

// BenchmarkMessagesResize1M is a resize of the messages screen over a group
// of 1,000,000 messages and the frame after it.
func BenchmarkMessagesResize1M(b *testing.B) {
	insp, g := millionMessages(1_000_000)
	m := NewMessages(testContext())
	m.SetSize(120, 40)
	m.Open(insp, g, nil)
	m.table.Select(500_000)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		m.SetSize(100+n%40, 30+n%20)
		_ = m.View()
		n++
	}
}

// BenchmarkMessagesRefresh1M is a refresh landing on the messages screen of
// a group of 1,000,000 messages with two marked and the cursor in the
// middle: the selection and the marks are found again in the new read.
func BenchmarkMessagesRefresh1M(b *testing.B) {
	insp, g := millionMessages(1_000_000)
	m := NewMessages(testContext())
	m.SetSize(120, 40)
	m.Open(insp, g, nil)
	m.table.Select(3)
	m.ToggleMark()
	m.table.Select(500_000)
	m.ToggleMark()
	m.table.Select(500_000)
	b.ReportAllocs()
	for b.Loop() {
		m.SetGroup(insp, g, nil)
		_ = m.View()
	}
	if sel, _ := m.Selected(); sel.ID != "msg_order-0500000" || len(m.Marked()) != 2 {
		b.Fatalf("selected %s, %d marked", sel.ID, len(m.Marked()))
	}
}

// TestTypingAKeyStopsOnceTheScreenIsFull: a key whose matches fill the
// screen early stops searching there (after the first wholeRows rows) and
// leaves the rest to the steps; the rows drawn are the first matches.
func TestTypingAKeyStopsOnceTheScreenIsFull(t *testing.T) {
	tb := newManagedTable(testContext(), []Column{{Title: "id", Width: 10, Flex: 1}})
	tb.SetSize(60, 11)
	formatted := 0
	tb.SetSource(1_000_000, func(i int) []string { formatted++; return []string{fmt.Sprintf("m-%07d", i)} })
	tb.StartFilter()
	tb.SetSubstring("m-")
	if formatted != wholeRows || !tb.Searching() || tb.Len() != wholeRows {
		t.Fatalf("the key formatted %d rows (%d matched), want the first %d", formatted, tb.Len(), wholeRows)
	}
	if v := ansi.Strip(tb.View()); !strings.Contains(v, "› m-0000000") || !strings.Contains(v, "m-0000008") {
		t.Fatalf("the first matches are not drawn:\n%s", v)
	}
	formatted = 0
	tb.Settle()
	if tb.Len() != 1_000_000 || formatted != 1_000_000-wholeRows {
		t.Fatalf("settled: %d matched, %d formatted", tb.Len(), formatted)
	}
}

// TestSearchingCountIsNeverCut: while the search runs the filter line says
// so within the width, shorter on a narrow screen, never cutting a number.
func TestSearchingCountIsNeverCut(t *testing.T) {
	for _, c := range []struct {
		width int
		want  string
	}{
		{80, "(searching… 1,000 matched so far of 1,000,000)"},
		{60, "(searching… 1,000 so far)"},
		{40, "(1,000…)"},
	} {
		tb := newManagedTable(testContext(), []Column{{Title: "id", Width: 10, Flex: 1}})
		tb.SetSize(c.width, 5)
		tb.stepRows = 1000
		tb.SetSource(1_000_000, func(i int) []string { return []string{fmt.Sprintf("m-%07d", i)} })
		tb.StartFilter()
		tb.SetSubstring("m-00")
		lines := strings.Split(ansi.Strip(tb.View()), "\n")
		bar := lines[len(lines)-1]
		if !strings.Contains(bar, c.want) || ansi.StringWidth(bar) > c.width {
			t.Errorf("%d columns: filter line %q, want %q within the width", c.width, bar, c.want)
		}
	}
}
