package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
)

// TestTUIEditsAPayloadInTheEditorAsARevision: W opens the message in
// $EDITOR (here a script that changes the amount), the saved change asks
// for a reason and is journaled as a revision after a reveal entry; the
// queue keeps the original.
func TestTUIEditsAPayloadInTheEditorAsARevision(t *testing.T) {
	b := newReplayBed(t, "edit-tui")
	ids := b.park(2)
	original := string(b.read(bedParking)[0].Body)
	script := filepath.Join(t.TempDir(), "fix-amount")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsed -i 's/\"amount\": 0/\"amount\": 4200/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startTerm(t, 120, 30, append(slices.Clone(b.env), "EDITOR="+script), "--actor", "ana@bastion", "--queue", bedParking)
	s.waitFor("all 2 messages", "rejected")
	s.keys("Enter")
	s.waitFor(ids[0], ids[1])
	s.keys("Enter")
	s.waitFor(`"amount"`)
	s.keys("W")
	s.waitFor("Edit the payload in $EDITOR?")
	s.keys("y")
	s.waitFor("Revision of "+ids[0]+": 1 field(s) changed", "amount: 0 -> 4200")
	s.typeText("amount lost by the checkout bug")
	s.keys("Enter")
	s.waitFor("revision rev-", "journaled (1 field(s) changed)")

	if got := b.read(bedParking); string(got[0].Body) != original {
		t.Errorf("the queue's message changed: %s", got[0].Body)
	}

	// R on the message replays it: the copy carries the revision.
	stop := b.consume(bedOrders)
	s.keys("R")
	s.waitFor("revisions", ids[0]+" -> rev-")
	s.keys("o")
	s.waitFor("observe for:")
	s.keys("C-u")
	s.typeText("1s")
	s.keys("Enter")
	s.keys("Enter")
	s.waitFor("Start the replay?")
	s.keys("y")
	s.waitFor("FINISHED", "resolved     1")
	b.waitDepth(bedParking, 1)
	got := stop()
	if len(got) != 1 || string(got[0].d.Body) != `{"message_id":"order-00000","event_type":"order.created","amount":4200}` ||
		got[0].d.MessageId != ids[0] || got[0].d.Headers["x-dlqt-revision"] == nil {
		t.Errorf("the TUI replay published %d message(s): %+v", len(got), got)
	}
	rs, err := b.verifyJournal().Records()
	if err != nil {
		t.Fatal(err)
	}
	var trail []string
	for _, r := range rs {
		if r.Action == triage.ActionReveal || r.Action == triage.ActionEdit {
			trail = append(trail, string(r.Action)+":"+r.Actor)
		}
		if r.Action == triage.ActionEdit {
			rev, _ := r.Details["revision"].(map[string]any)
			edited := `{"message_id":"order-00000","event_type":"order.created","amount":4200}`
			_, inline := rev["body"]
			if inline || rev["sha256_before"] != approval.SHA256([]byte(original)) || rev["sha256_after"] != approval.SHA256([]byte(edited)) || r.Reason != "amount lost by the checkout bug" {
				t.Errorf("revision %v", rev)
			}
		}
	}
	if !slices.Equal(trail, []string{"reveal:ana@bastion", "edit:ana@bastion"}) {
		t.Errorf("journal trail %v, want the reveal, then the edit", trail)
	}
}
