package ui

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/triagetest"
	"github.com/dlqt/dlqt/internal/views"
)

// openMillionMessages shows a group of n messages on the messages screen,
// as a browse of a deep parking queue leaves it.
func openMillionMessages(h *harness, n int) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	insp := &triage.Inspection{Batch: triage.Batch{Queue: "orders.dlq", Depth: n}}
	insp.Messages = make([]triage.Triaged, n)
	g := triage.Group{Reason: triage.ReasonRejected, ReasonCode: "E42", Count: n, Members: make([]int, n)}
	for i := range triagetest.Messages(insp) {
		insp.Messages[i] = triage.Triaged{ID: fmt.Sprintf("msg_order-%07d", i), Attempts: i % 7,
			DiedAt: at.Add(time.Duration(i) * time.Millisecond), ReasonCode: "E42"}
		g.Members[i] = i
	}
	h.m.messages.Open(insp, g, nil)
	h.m.c.focus = screenMessages
}

// stepsOf runs cmd as the program would, without what it leads to, and
// returns the search steps it brought back.
func stepsOf(cmd tea.Cmd) []views.SearchStep {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case views.SearchStep:
		return []views.SearchStep{msg}
	case tea.BatchMsg:
		var out []views.SearchStep
		for _, c := range msg {
			out = append(out, stepsOf(c)...)
		}
		return out
	}
	return nil
}

// TestFilterKeyOverAMillionMessagesAnswersAtOnce: a key typed into the bar
// of a group of 1,000,000 messages returns from Update having searched a
// slice of them, the screen says the count is coming, and the count
// arrives exact through the steps the key's command starts. A step of the
// search the next key replaced is dropped.
func TestFilterKeyOverAMillionMessagesAnswersAtOnce(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 120, 40)
	openMillionMessages(h, 1_000_000)
	h.press("filter")
	tb := h.m.messages.Table()

	_, cmd := h.m.Update(keyPress("9"))
	if !tb.Searching() || tb.Len() >= 1_000_000 {
		t.Fatalf("the key searched %d rows in Update, want a slice", tb.Len())
	}
	h.mustShow("/ 9", "matched so far of 1,000,000", "msg_order-0000009")
	first := stepsOf(cmd)
	if len(first) != 1 {
		t.Fatalf("the key's command brought %d search steps, want 1", len(first))
	}

	_, cmd = h.m.Update(keyPress("9")) // "99" replaces the search of "9"
	h.send(first[0])                   // stale: does nothing, schedules nothing
	if !tb.Searching() {
		t.Fatal("a stale step finished the new search")
	}
	h.run(cmd)
	want := 0 // the plain way: every id formatted and searched
	for i := range 1_000_000 {
		if strings.Contains(fmt.Sprintf("msg_order-%07d", i), "99") {
			want++
		}
	}
	if tb.Searching() || tb.Len() != want {
		t.Fatalf("after the steps: %d matched (searching %v), want %d", tb.Len(), tb.Searching(), want)
	}
	h.mustShow(fmt.Sprintf("(%s of 1,000,000)", views.Count(want)), "msg_order-0000099")
	h.mustNotShow("so far")
}

// BenchmarkFilterKeyOverAMillionMessages is one key typed into the filter of
// a group of 1,000,000 messages, through the root's Update (the first slice
// of the search and the frame's layout), alternating "9" and a backspace so
// every key starts a search of the whole group.
func BenchmarkFilterKeyOverAMillionMessages(b *testing.B) {
	b.Setenv("NO_COLOR", "1")
	h := newHarness(b, Options{}, 120, 40)
	openMillionMessages(h, 1_000_000)
	h.press("filter")
	keys := []tea.KeyPressMsg{keyPress("9"), keyPress("backspace")}
	var worst time.Duration
	b.ResetTimer()
	n := 0
	for b.Loop() {
		start := time.Now()
		h.m.Update(keys[n%2])
		worst = max(worst, time.Since(start))
		n++
	}
	b.ReportMetric(float64(worst)/float64(time.Millisecond), "max-ms/key")
}

// TestGroupsFieldFilterOverManyMessagesAnswersAtOnce: on the groups screen
// of 200,000 messages, the key that completes a field filter returns from
// Update with the filter still being put in force (the last one stays, and
// the screen says how far it got); its command's steps bring the groups
// filter.Narrow makes.
func TestGroupsFieldFilterOverManyMessagesAnswersAtOnce(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 120, 40)
	const n = 200_000
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	insp := &triage.Inspection{Batch: triage.Batch{Queue: "orders.dlq", Depth: n}}
	insp.Messages = make([]triage.Triaged, n)
	for i := range triagetest.Messages(insp) {
		insp.Messages[i] = triage.Triaged{ID: fmt.Sprintf("m-%07d", i), Reason: triage.ReasonRejected,
			ReasonCode: fmt.Sprintf("E%d", i%5), DiedAt: at.Add(-time.Duration(i) * time.Millisecond)}
	}
	insp.Groups = triage.GroupMessages(insp.Messages)
	h.m.groups.Open("orders.dlq")
	h.m.groups.SetInspection(insp)
	h.m.c.focus = screenGroups
	h.press("filter")
	h.typeText("reason_code=E")
	_, cmd := h.m.Update(keyPress("1"))
	if !h.m.groups.Narrowing() || h.m.groups.Filter().String() != "reason_code=E" {
		t.Fatalf("the key put the filter in force in Update (narrowing %v, filter %q)", h.m.groups.Narrowing(), h.m.groups.Filter())
	}
	h.mustShow("filtering by reason_code=E1:", "of 200,000 messages tested")
	h.run(cmd)
	f, err := filter.ParseLine("reason_code=E1", filter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := f.Narrow(*insp)
	got := h.m.groups.Inspection()
	if h.m.groups.Narrowing() || got.Len() != n/5 || !reflect.DeepEqual(got.Groups, want.Groups) {
		t.Fatalf("after the steps: narrowing %v, %d messages in %d groups", h.m.groups.Narrowing(), got.Len(), len(got.Groups))
	}
	h.mustShow("filtered: 40,000 of 200,000 messages where reason_code=E1")
	h.mustNotShow("tested")
}

// TestReadUnderAFieldFilterComesInSteps: a read of 200,000 messages arriving
// while a group narrowed by a field filter is open is narrowed in steps; the
// read before stays on both screens meanwhile (an action takes what is
// shown), and once it is on screen the open group shows the new read's
// messages.
func TestReadUnderAFieldFilterComesInSteps(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := openFilteredGroup(t)

	const n = 200_000
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	read := triage.Inspection{Batch: triage.Batch{Queue: "orders.dlq", Depth: n}}
	read.Messages = make([]triage.Triaged, n)
	codes := []string{"INVALID_SKU", "PAYMENT_TIMEOUT", "INVALID_SKU", "INVALID_SKU", "INVALID_SKU"}
	for i := range read.Messages {
		read.Messages[i] = triage.Triaged{ID: fmt.Sprintf("m-%07d", i), Reason: triage.ReasonRejected,
			ReasonCode: codes[i%5], DiedAt: at.Add(time.Duration(i) * time.Millisecond)}
	}
	read.Groups = triage.GroupMessages(read.Messages)
	h.m.flow.refresh() // the browse is answered by hand below
	_, cmd := h.m.Update(inspectedMsg{id: h.m.flow.browse.id, queue: "orders.dlq", insp: read})
	if !h.m.groups.Narrowing() {
		t.Fatal("the read was narrowed whole in the Update it arrived in")
	}
	h.mustShow("rejected / PAYMENT_TIMEOUT — 1 message", "m-1004")
	if tg, err := h.m.target(); err != nil || len(tg.ids) != 1 || tg.ids[0] != "m-1004" {
		t.Fatalf("meanwhile an action takes %v (%v), want m-1004 as shown", tg.ids, err)
	}
	h.run(cmd)
	if h.m.groups.Narrowing() || h.m.c.focus != screenMessages {
		t.Fatalf("after the steps: narrowing %v, screen %d", h.m.groups.Narrowing(), h.m.c.focus)
	}
	h.mustShow("rejected / PAYMENT_TIMEOUT — 40,000 messages", "m-0000001")
	h.mustNotShow("m-1004", "INVALID_SKU")
	if tg, err := h.m.target(); err != nil || len(tg.ids) != 1 || tg.ids[0] != "m-0000001" {
		t.Fatalf("after the read an action takes %v (%v), want m-0000001", tg.ids, err)
	}
}
