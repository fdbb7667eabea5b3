package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestFilterFieldsNarrowGroupsByRegrouping: reason_code=… on the groups
// screen regroups the matching messages; the header says which filter.
func TestFilterFieldsNarrowGroupsByRegrouping(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue("orders.dlq")
	all := len(h.m.groups.Inspection().Groups)
	h.press("filter")
	h.typeText("reason_code=PAYMENT_TIMEOUT")
	insp := h.m.groups.Inspection()
	if len(insp.Groups) != 1 || insp.Groups[0].ReasonCode != "PAYMENT_TIMEOUT" || insp.Groups[0].Count != 1 {
		t.Fatalf("groups after the filter: %+v (had %d)", insp.Groups, all)
	}
	h.press("open") // enter keeps the filter
	h.mustShow("filtered: 1 of 5 messages where reason_code=PAYMENT_TIMEOUT")
	tg, err := h.m.target()
	if err != nil || len(tg.ids) != 1 || tg.ids[0] != "m-1004" || tg.what != "group rejected/PAYMENT_TIMEOUT where reason_code=PAYMENT_TIMEOUT" {
		t.Fatalf("the filtered group's target: %+v (%v)", tg, err)
	}
	h.press("open") // now opens the group: its messages are the filtered ones
	if h.m.c.focus != screenMessages || h.m.messages.Table().Len() != 1 {
		t.Fatalf("screen %d with %d messages", h.m.c.focus, h.m.messages.Table().Len())
	}
	h.press("back")
	h.press("back") // clears the filter
	if got := len(h.m.groups.Inspection().Groups); got != all {
		t.Fatalf("after clearing, %d groups, want %d", got, all)
	}
}

// TestFilterFieldsNarrowMessagesAndTheSelection: on the messages screen a
// field filter hides messages; a marked message the filter hides is not
// part of the action's selection.
func TestFilterFieldsNarrowMessagesAndTheSelection(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h, _ := liveHarness(t, 120, 40)
	openInvalidSKU(h)
	if n := h.m.messages.Table().Len(); n != 3 {
		t.Fatalf("group has %d messages, want 3", n)
	}
	h.press("mark") // m-1001, the oldest (40m)
	h.press("filter")
	h.typeText("died<30m")
	if n := h.m.messages.Table().Len(); n != 2 {
		t.Fatalf("died<30m shows %d messages, want 2", n)
	}
	h.press("open")
	h.mustShow("filtered: 2 of 3 messages where died<30m")
	if got := h.m.messages.Marked(); len(got) != 0 {
		t.Fatalf("marked and hidden by the filter, still selected: %v", got)
	}
	tg, err := h.m.target()
	if err != nil || len(tg.ids) != 1 || tg.ids[0] == "m-1001" {
		t.Fatalf("target %v (%v): want the selected visible message only", tg.ids, err)
	}
}

// TestBadFilterKeepsTheLastGoodOne: an expression that does not parse shows
// the parser's error under the bar and leaves the previous filter in force.
func TestBadFilterKeepsTheLastGoodOne(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue("orders.dlq")
	h.press("filter")
	h.typeText("reason_code=INVALID_SKU")
	if n := h.m.groups.Inspection().Len(); n != 3 {
		t.Fatalf("good filter kept %d messages, want 3", n)
	}
	h.send(tea.PasteMsg{Content: " colour=red"}) // at once: typing passes through text~c, text~co…
	h.mustShow("bad filter, the last good one stays", `unknown field "colour"`)
	if n := h.m.groups.Inspection().Len(); n != 3 {
		t.Fatalf("after a bad expression %d messages, want the last good filter's 3", n)
	}
	if f := h.m.groups.Filter().String(); f != "reason_code=INVALID_SKU" {
		t.Fatalf("filter in force %q", f)
	}
}

// TestPlainFilterStaysSubstring: a line without an operator filters rows
// by substring as before, and a field filter never does.
func TestPlainFilterStaysSubstring(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue("orders.dlq")
	h.press("filter")
	h.typeText("timeout")
	if n := h.m.groups.Table().Len(); n != 1 {
		t.Fatalf("substring 'timeout' shows %d groups, want 1", n)
	}
	if !h.m.groups.Filter().Empty() {
		t.Fatal("a plain word became a field filter")
	}
}

// TestTypingInTheFilterNeverTriggersActions: every action key typed into
// the bar is text.
func TestTypingInTheFilterNeverTriggersActions(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h, _ := liveHarness(t, 120, 40)
	openInvalidSKU(h)
	h.press("filter")
	h.typeText("xRvDJqtUm ")
	if h.m.c.dialog != nil || h.m.c.focus != screenMessages || h.quit {
		t.Fatalf("typing fired an action: dialog %T, screen %d, quit %v", h.m.c.dialog, h.m.c.focus, h.quit)
	}
	if got := h.m.messages.Table().FilterValue(); got != "xRvDJqtUm " {
		t.Fatalf("filter text %q", got)
	}
}

// TestABareWordNoRowHoldsSearchesThePayload: a customer id lives in the
// payload, not in the rows: a bare word no row contains searches the
// headers and payload (text~) and says so under the bar, instead of showing
// nothing with no hint; a word that matches nothing anywhere says that.
func TestABareWordNoRowHoldsSearchesThePayload(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue("orders.dlq")
	h.press("filter")
	h.typeText("o-9") // in m-1004's payload only
	if n := h.m.groups.Table().Len(); n != 1 {
		t.Fatalf("'o-9' shows %d groups, want the one of m-1004", n)
	}
	h.mustShow("PAYMENT_TIMEOUT", "where text~o-9", `no row contains "o-9": searched headers and payload (text~o-9)`)
	h.press("open")
	h.mustShow("1 of 5 messages")

	h.press("back")
	h.press("filter")
	h.typeText("zz-no-such-thing")
	h.mustShow(`no row contains "zz-no-such-thing": searched headers and payload`, "No message matches text~zz-no-such-thing")
}
