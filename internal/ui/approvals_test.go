package ui

import (
	"context"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
)

// TestGatedRevealWaitsForItsApproval: with approvals.reveal, v asks the
// workflow first: without an approved reveal it names the proposal, shows
// nothing and journals no reveal; once approved, v asks as usual.
func TestGatedRevealWaitsForItsApproval(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	j := openJournal(t)
	policy := approval.Policy{approval.GateReveal: {}}
	approved := false
	var asked []string
	h := newHarness(t, Options{Journal: j, Approvals: &Approvals{
		Needs: policy.Needs,
		Reveal: func(_ context.Context, queue string, msg triage.Triaged) (string, bool, error) {
			asked = append(asked, queue+"/"+msg.ID)
			return "p-0123456789", approved, nil
		},
	}}, 120, 40)
	openM1001(h)

	_, cmd := h.m.Update(keyPress("v"))
	if h.m.c.dialog != nil || cmd == nil {
		t.Fatalf("a gated reveal opened %T at once", h.m.c.dialog)
	}
	h.m.Update(cmd())
	if h.m.c.dialog != nil {
		t.Fatalf("an unapproved reveal opened %T", h.m.c.dialog)
	}
	h.mustShow("reveal needs a second person", "p-0123456789")
	h.mustNotShow("hunter2")
	if n := len(reveals(t, j)); n != 0 {
		t.Fatalf("%d reveal entries, want none", n)
	}

	approved = true
	_, cmd = h.m.Update(keyPress("v"))
	h.m.Update(cmd())
	if _, ok := h.m.c.dialog.(*revealConfirm); !ok {
		t.Fatalf("an approved reveal opened %T, want its confirmation", h.m.c.dialog)
	}
	if len(asked) != 2 || asked[0] != asked[1] || asked[0] == "/" {
		t.Errorf("asked %v", asked)
	}
}
