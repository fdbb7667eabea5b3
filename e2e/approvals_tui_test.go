package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTUIProposesAndRunsApprovedProposals: in the TUI a gated discard
// becomes a proposal and moves nothing; the proposals screen (P) lists it,
// refuses to run it while pending, and after carol's approval y runs it:
// exactly the proposed message leaves the queue.
func TestTUIProposesAndRunsApprovedProposals(t *testing.T) {
	b, p := approvalBed(t, "approve-tui", "")
	ids := b.park(3)
	s := startTerm(t, 120, 30, p.as(b.env, "alice"), "--queue", bedParking)

	s.waitFor("all 3 messages", "rejected", "owner", "orders")
	s.waitFor("actor alice") // DLQT_KEY's user, as the CLI names her, not login@host
	s.keys("Enter")
	s.waitFor(ids[0], ids[2])
	s.keys("Space") // marks the first
	s.waitFor("1 marked")
	s.keys("x")
	s.waitFor("Discard 1 message from " + bedParking)
	s.typeText("duplicate of INC-7")
	s.keys("Enter")
	s.waitFor("Discard for good?")
	s.keys("y")
	s.waitFor("needs a second person: proposal p-")
	if n := b.depth(bedParking); n != 3 {
		t.Fatalf("the proposal moved messages: parking holds %d", n)
	}

	res := runDlqt(t, b.env, "proposals", "--json")
	var listed []proposalOut
	if err := json.Unmarshal([]byte(res.stdout), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("proposals --json: %v\n%s%s", err, res.stdout, res.stderr)
	}
	prop := listed[0]
	if prop.Action != "discard" || prop.Proposer != "alice" || !slices.Equal(prop.MessageIDs, ids[:1]) {
		t.Fatalf("proposal %+v", prop)
	}

	s.keys("P")
	s.waitFor("proposals — actions waiting", prop.Proposal, "pending")
	s.keys("y")
	s.waitFor("is pending: only an approved proposal runs")

	if res := runDlqt(t, p.as(b.env, "carol"), "approve", prop.Proposal, "--reason", "ok"); res.code != 0 {
		t.Fatalf("approve exited %d: %s", res.code, res.stderr)
	}
	s.keys("r")
	s.waitFor("approved", "carol")
	s.keys("Enter") // the proposal whole, as an approver and the runner read it
	s.waitFor("proposal "+prop.Proposal+": discard 1 message(s) of "+bedParking, "approved by carol at ",
		"reason: duplicate of INC-7", ids[0])
	s.keys("y")
	s.waitFor("proposal " + prop.Proposal + " run:")
	s.waitFor("run by alice at ") // the screen read again after the run
	s.keys("Escape")
	s.waitFor("proposals — actions waiting", "run ")
	deadline := time.Now().Add(5 * time.Second)
	for b.depth(bedParking) != 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := messageIDs(b.read(bedParking)); !slices.Equal(got, ids[1:]) {
		t.Errorf("parking holds %v, want %v", got, ids[1:])
	}
	res = runDlqt(t, b.env, "proposals")
	if !strings.Contains(res.stdout, "approved by carol, run by alice") {
		t.Errorf("proposals: %s", res.stdout)
	}
	b.verifyJournal()
}
