package ui

import (
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// TestAMessageReopenedOpensAtItsTop: leaving a message scrolled down and
// opening it again later showed it where it was left, headers first.
func TestAMessageReopenedOpensAtItsTop(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 80, 24)
	h.openQueue("orders.dlq")
	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	h.press("open")
	h.press("open") // the first message
	h.mustShow("identity")
	h.press("bottom")
	h.mustNotShow("identity")
	h.press("back")
	h.press("open") // the same message, later
	h.mustShow("identity")
}
