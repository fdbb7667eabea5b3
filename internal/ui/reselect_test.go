package ui

import "testing"

// TestRefreshUnderAFieldFilterKeepsTheGroupsMessages: a refresh while the
// messages of a group narrowed by a field filter are open shows that
// group's messages again. It showed the message at the same index of the
// unfiltered read (m-1001, INVALID_SKU, under PAYMENT_TIMEOUT's title),
// which the next discard would have taken.
func TestRefreshUnderAFieldFilterKeepsTheGroupsMessages(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := openFilteredGroup(t)
	h.press("refresh")
	h.mustShow("rejected / PAYMENT_TIMEOUT — 1 message", "m-1004")
	h.mustNotShow("m-1001")
	if tg, err := h.m.target(); err != nil || len(tg.ids) != 1 || tg.ids[0] != "m-1004" {
		t.Fatalf("after the refresh the action takes %v (%v), want m-1004", tg.ids, err)
	}
}

// openFilteredGroup opens orders.dlq under the field filter
// reason_code=PAYMENT_TIMEOUT, then its one group (m-1004), at 120x40.
func openFilteredGroup(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue("orders.dlq")
	h.press("filter")
	h.typeText("reason_code=PAYMENT_TIMEOUT")
	h.press("open") // keeps the filter
	h.press("open") // the group
	h.mustShow("rejected / PAYMENT_TIMEOUT — 1 message", "m-1004")
	return h
}
