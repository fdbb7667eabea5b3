package replay

import (
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// The hold reads up to the last chosen message, by its place in the queue:
// in the CLI's inspection (every message read) and in the TUI's (only the
// chosen ones, read back from the spill with their browse positions).
func TestThePlanHoldsUpToTheLastChosenMessage(t *testing.T) {
	h := triage.Headers{"x-death": deathList(xdeath("orders", "rejected", 1, mustTime("2026-11-30T10:00:00Z"), "orders", "order.created"))}
	var ms []triage.Message
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		m := parkedMsg(id, h, `{}`)
		m.Position = i
		ms = append(ms, m)
	}
	whole := replayInspection(ms...)
	p, err := NewPlan(whole, triage.Selection{IDs: []string{"b", "d"}}, Options{})
	if err != nil || p.HoldUpTo != 4 || p.HoldLimit(0) != 4 || p.HoldLimit(3) != 3 {
		t.Fatalf("whole read: hold up to %d (limit %d), %v; want 4", p.HoldUpTo, p.HoldLimit(0), err)
	}
	chosen := replayInspection(ms[1], ms[3]) // positions 1 and 3 kept
	if p, err := NewPlan(chosen, triage.Selection{IDs: []string{"b", "d"}}, Options{}); err != nil || p.HoldUpTo != 4 {
		t.Fatalf("chosen only: hold up to %d, %v; want 4", p.HoldUpTo, err)
	}
}
