package ui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
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

// TestGatedEditWaitsForAnApprovedReveal: the editor shows the payload
// unredacted, so under approvals.reveal an edit waits for an approved
// reveal of the message as v does: without one it names the proposal and
// opens nothing; once approved, it asks to open the editor.
func TestGatedEditWaitsForAnApprovedReveal(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	j := openJournal(t)
	policy := approval.Policy{approval.GateReveal: {}}
	approved := false
	h := newHarness(t, Options{Journal: j,
		Revise: func(context.Context, string, triage.Triaged, []byte, string) (string, error) { return "", nil },
		Approvals: &Approvals{
			Needs: policy.Needs,
			Reveal: func(context.Context, string, triage.Triaged) (string, bool, error) {
				return "p-0123456789", approved, nil
			},
		}}, 120, 40)
	openM1001(h)

	_, cmd := h.m.Update(keyPress("W"))
	if h.m.c.dialog != nil || cmd == nil {
		t.Fatalf("a gated edit opened %T at once, or asked nothing:\n%s", h.m.c.dialog, h.screen())
	}
	h.m.Update(cmd())
	if h.m.c.dialog != nil {
		t.Fatalf("an edit without an approved reveal opened %T", h.m.c.dialog)
	}
	h.mustShow("reveal needs a second person", "p-0123456789")
	if n := len(reveals(t, j)); n != 0 {
		t.Fatalf("%d reveal entries, want none", n)
	}

	approved = true
	_, cmd = h.m.Update(keyPress("W"))
	h.m.Update(cmd())
	if _, ok := h.m.c.dialog.(*editConfirm); !ok {
		t.Fatalf("an edit with an approved reveal opened %T, want the edit's confirmation", h.m.c.dialog)
	}
}

// TestAProposalOpensWhole: enter on a proposal shows it whole, as `dlqt
// proposals ID` does (plan, owners, who may approve, the exact ids), at
// 80x24; y on a pending one says why it does not run; back returns to the
// list, and back again leaves it.
func TestAProposalOpensWhole(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	at := fixedNow.Add(-time.Hour)
	ids := make([]string, 40)
	for i := range ids {
		ids[i] = fmt.Sprintf("m-%04d", i)
	}
	pending := approval.State{Proposal: approval.Proposal{ID: "p-00000000aa", Action: "replay", Vhost: "shop", Queue: "orders.dlq",
		MessageIDs: ids, Teams: []string{"orders"}, Proposer: "ana@bastion", ProposedAt: at, ExpiresAt: at.Add(24 * time.Hour),
		Plan: approval.Plan{Reason: "the fix is deployed", To: "orders:order.created", Canary: 2, Rate: 5}}}
	approved := approval.State{Proposal: approval.Proposal{ID: "p-00000000bb", Action: "discard", Vhost: "shop", Queue: "orders.dlq",
		MessageIDs: []string{"m-9"}, Proposer: "bo", ProposedAt: at, ExpiresAt: at.Add(24 * time.Hour)},
		Decisions: []approval.Decision{{Approve: true, By: "carol", At: at.Add(time.Minute)}}}
	h := newHarness(t, Options{Approvals: &Approvals{
		Needs:     func(string, int) bool { return false },
		Proposals: func() ([]approval.State, error) { return []approval.State{pending, approved}, nil },
		Approvers: func(teams []string, proposer string) []string {
			if proposer == "ana@bastion" && slices.Equal(teams, []string{"orders"}) {
				return []string{"carol", "dan"}
			}
			return nil
		},
	}}, 80, 24)
	h.press("proposals")
	h.mustShow("p-00000000aa", "p-00000000bb", "enter shows one whole")
	h.m.proposals.Table().Select(1) // newest first: the pending one is second
	h.press("open")
	h.mustShow("proposal p-00000000aa", "replay 40 message(s) of orders.dlq", "pending",
		"owners: orders; may approve: carol, dan", "reason: the fix is deployed", "plan canary: 2", "plan rate: 5",
		"plan to: orders:order.created", "m-0000")
	for _, l := range strings.Split(h.screen(), "\n") {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("a line of %d cells at 80 columns: %q", w, l)
		}
	}
	h.mustNotShow("m-0039")
	h.press("bottom")
	h.mustShow("m-0039")

	h.press("run_proposal")
	h.mustShow("proposal p-00000000aa is pending: only an approved proposal runs")

	h.press("back")
	h.mustShow("proposals — actions waiting for a second person")
	h.press("open") // the cursor stayed on the pending one
	h.mustShow("proposal p-00000000aa")
	h.press("back")
	h.press("back")
	h.mustNotShow("proposals — actions waiting")
}
