package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
)

// TestEditIsARevisionAndReplayPublishesIt: edit leaves the parked message
// as it is and journals a revision; a replay of that id publishes the
// revision's body with the original message_id and the revision headers,
// and acks the original only after the copy is confirmed.
func TestEditIsARevisionAndReplayPublishesIt(t *testing.T) {
	b := newReplayBed(t, "edit-revision")
	ids := b.park(2)
	before := b.read(bedParking)
	original := string(before[0].Body)

	res := runDlqt(t, b.env, "edit", bedParking, "--id", ids[0], "--set", "amount=999", "--set", `customer.zip="10115"`, "--reason", "amount typo from the checkout bug", "--json")
	if res.code != 0 {
		t.Fatalf("edit exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	var rev approval.Revision
	if err := json.Unmarshal([]byte(res.stdout), &rev); err != nil {
		t.Fatalf("edit --json: %v\n%s", err, res.stdout)
	}
	want := `{"message_id":"order-00000","event_type":"order.created","amount":999,"customer":{"zip":"10115"}}`
	if rev.InlineBody != "" || rev.OriginalBody != "" || rev.SHA256Before != approval.SHA256([]byte(original)) || rev.SHA256After != approval.SHA256([]byte(want)) {
		t.Fatalf("revision %+v", rev)
	}
	after := b.read(bedParking)
	if len(after) != 2 || string(after[0].Body) != original {
		t.Fatalf("the edit changed the queue: %d messages, first body %s", len(after), after[0].Body)
	}

	// A body that is not JSON is refused before anything is stored.
	if err := b.ch.PublishWithContext(context.Background(), "", bedParking, false, false, amqp.Publishing{MessageId: "plain-1", Body: []byte("not json at all")}); err != nil {
		t.Fatal(err)
	}
	b.waitDepth(bedParking, 3)
	if res := runDlqt(t, b.env, "edit", bedParking, "--id", "plain-1", "--set", "a=1", "--reason", "x"); res.code == 0 || !strings.Contains(res.stderr, "not JSON") {
		t.Errorf("an edit of a non-JSON body exited %d: %s", res.code, res.stderr)
	}

	res = runDlqt(t, b.env, "replay", bedParking, "--id", ids[0], "--json")
	var plan struct {
		Revisions map[string]string `json:"revisions"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &plan); err != nil || plan.Revisions[ids[0]] != rev.ID {
		t.Errorf("replay --json revisions %v (%v), want %s: %s", plan.Revisions, err, rev.ID, res.stdout)
	}

	stop := b.consume(bedOrders)
	res = runDlqt(t, b.env, "replay", bedParking, "--id", ids[0], "--canary", "1", "--observe", "500ms", "--yes")
	if res.code != 0 || !strings.Contains(res.stdout, "publishes revision "+rev.ID) {
		t.Fatalf("replay exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.depth(bedOrders) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	got := stop()
	if len(got) != 1 {
		t.Fatalf("the destination received %d messages, want 1", len(got))
	}
	d := got[0].d
	if string(d.Body) != want || d.MessageId != ids[0] || d.Headers["x-dlqt-revision"] != rev.ID || d.Headers["x-dlqt-original-sha256"] != rev.SHA256Before {
		t.Errorf("published %s id %s headers %v", d.Body, d.MessageId, d.Headers)
	}
	if left := messageIDs(b.read(bedParking)); !slices.Equal(left, []string{ids[1], "plain-1"}) {
		t.Errorf("parking holds %v, want the untouched ones", left)
	}

	j := b.verifyJournal()
	rs, err := j.Records()
	if err != nil {
		t.Fatal(err)
	}
	var trail []string
	for _, r := range rs {
		switch {
		case r.Action == triage.ActionEdit:
			kept, _ := r.Details["revision"].(map[string]any)
			_, body := kept["body"]
			_, originalBody := kept["original_body"]
			if body || originalBody || kept["sha256_before"] != rev.SHA256Before || kept["sha256_after"] != rev.SHA256After {
				t.Errorf("the journal's revision is not its hashes and changes alone: %v", kept)
			}
			trail = append(trail, "edit")
		case r.Action == triage.ActionReplayOutcome && slices.Contains(r.MessageIDs, ids[0]):
			trail = append(trail, r.Reason)
			if r.Reason == "resolved" && r.Details["acked"] != true {
				t.Errorf("resolved without the ack: %v", r.Details)
			}
		}
	}
	if !slices.Equal(trail, []string{"edit", "published", "confirmed", "resolved"}) {
		t.Errorf("journal trail %v, want the edit, then published (before the send), confirmed, then resolved (acked after the confirm)", trail)
	}
}

// TestGatedEditCountsOnceApproved: under approvals.edit an edit is a
// proposal (exit 3) and a replay plan ignores its revision until another
// person approves it.
func TestGatedEditCountsOnceApproved(t *testing.T) {
	b := newReplayBed(t, "edit-gated")
	ids := b.park(1)
	p := newPeople(t)
	cfg := filepath.Join(p.dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("approvals:\n  edit: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.env = append(b.env, "DLQT_CONFIG="+cfg, "DLQT_USERS_FILE="+p.users)
	res := runDlqt(t, p.as(b.env, "alice"), "edit", bedParking, "--id", ids[0], "--set", "amount=7", "--reason", "INC-88", "--json")
	var prop proposalOut
	if err := json.Unmarshal([]byte(res.stdout), &prop); err != nil || res.code != 3 || prop.Action != "edit" || prop.Proposer != "alice" {
		t.Fatalf("a gated edit exited %d: %v %+v\n%s", res.code, err, prop, res.stderr)
	}
	if res := runDlqt(t, b.env, "replay", bedParking, "--id", ids[0]); res.code != 0 || strings.Contains(res.stdout, "publishes revision") {
		t.Errorf("a plan used an unapproved revision (exit %d):\n%s", res.code, res.stdout)
	}
	if res := runDlqt(t, p.as(b.env, "carol"), "approve", prop.Proposal); res.code != 0 {
		t.Fatalf("approve exited %d: %s", res.code, res.stderr)
	}
	if res := runDlqt(t, b.env, "replay", bedParking, "--id", ids[0]); res.code != 0 || !strings.Contains(res.stdout, ids[0]+": publishes revision rev-") {
		t.Errorf("the approved revision is not in the plan (exit %d):\n%s", res.code, res.stdout)
	}
}
