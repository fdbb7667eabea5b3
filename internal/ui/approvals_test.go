package ui

import (
	"context"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
)

// TestGatedRevealIsRefused: with approvals.reveal, v refuses and shows
// nothing, and journals no reveal.
func TestGatedRevealIsRefused(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	j := openJournal(t)
	policy := approval.Policy{approval.GateReveal: {}}
	h := newHarness(t, Options{Journal: j, Approvals: &Approvals{
		Needs: policy.Needs,
		Propose: func(context.Context, string, string, []triage.Triaged, approval.Plan) (string, error) {
			t.Fatal("a reveal was proposed")
			return "", nil
		},
	}}, 120, 40)
	openM1001(h)
	h.press("reveal")
	if h.m.c.dialog != nil {
		t.Fatalf("reveal opened %T", h.m.c.dialog)
	}
	h.mustShow("approvals.reveal asks a second person")
	h.mustNotShow("hunter2")
	if n := len(reveals(t, j)); n != 0 {
		t.Fatalf("%d reveal entries, want none", n)
	}
}
