package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
)

// TestStaleRevisionIsNotReplayedOverANewMessage: a revision of order-00000
// was made from its body then; a different message parked since under the
// same id is neither replaced by the old edit nor acked, and the replay
// says why.
func TestStaleRevisionIsNotReplayedOverANewMessage(t *testing.T) {
	b := newReplayBed(t, "edit-stale")
	ids := b.park(2)
	if res := runDlqt(t, b.env, "edit", bedParking, "--id", ids[0], "--set", "amount=999", "--reason", "amount typo"); res.code != 0 {
		t.Fatalf("edit exited %d: %s%s", res.code, res.stdout, res.stderr)
	}
	newBody := `{"message_id":"order-00000","event_type":"order.created","amount":999,"note":"NEW order"}`
	b.replaceParked(ids[0], newBody)

	if res := runDlqt(t, b.env, "replay", bedParking, "--id", ids[0]); !strings.Contains(res.stdout, "warning: "+ids[0]+" revision rev-") || !strings.Contains(res.stdout, "was made from") {
		t.Errorf("the dry run does not warn of the stale revision:\n%s%s", res.stdout, res.stderr)
	}
	stop := b.consume(bedOrders)
	res := runDlqt(t, b.env, "replay", bedParking, "--id", ids[0], "--canary", "1", "--observe", "500ms", "--yes")
	got := b.drainOrders(stop)
	if len(got) != 0 {
		t.Errorf("the destination received %d message(s), first %s: a stale revision was published", len(got), got[0].d.Body)
	}
	if out := res.stdout + res.stderr; !strings.Contains(out, "was made from") || !strings.Contains(out, ids[0]) {
		t.Errorf("replay (exit %d) does not say the revision is stale:\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if !b.holds(ids[0], newBody) {
		t.Errorf("the new %s is no longer in parking as it was", ids[0])
	}
}

// TestGatedEditJournalsNoPayload: a pending edit's proposal journals the
// SHA-256 before and after and the changed paths with redacted values;
// no viewer of the journal reads the password, card or e-mail of the
// payload, yet once approved the replay publishes the whole edited body.
func TestGatedEditJournalsNoPayload(t *testing.T) {
	b := newReplayBed(t, "edit-private")
	p := newPeople(t)
	cfg := filepath.Join(p.dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("approvals:\n  edit: {}\nreplay:\n  allow: [\"orders:order.created\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.env = append(b.env, "DLQT_CONFIG="+cfg, "DLQT_USERS_FILE="+p.users)
	secrets := []string{"hunter2-s3cret", "4111111111111111", "jane.doe@example.com", "new.addr@example.org"}
	body := `{"message_id":"pay-1","event_type":"order.created","amount":12,"password":"hunter2-s3cret","card":"4111111111111111","customer":{"email":"jane.doe@example.com"}}`
	if err := b.ch.PublishWithContext(context.Background(), "", bedParking, true, false, amqp.Publishing{MessageId: "pay-1", ContentType: "application/json", Body: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	b.waitDepth(bedParking, 1)

	res := runDlqt(t, p.as(b.env, "alice"), "edit", bedParking, "--id", "pay-1", "--set", "amount=7", "--set", `customer.email="new.addr@example.org"`, "--reason", "INC-90", "--json")
	var prop proposalOut
	if err := json.Unmarshal([]byte(res.stdout), &prop); err != nil || res.code != 3 {
		t.Fatalf("a gated edit exited %d: %v\n%s%s", res.code, err, res.stdout, res.stderr)
	}
	id := prop.Proposal
	for _, s := range secrets {
		if strings.Contains(res.stdout+res.stderr, s) {
			t.Errorf("edit printed %q:\n%s%s", s, res.stdout, res.stderr)
		}
	}
	exported := runDlqt(t, b.env, "journal", "export")
	if exported.code != 0 {
		t.Fatalf("journal export exited %d: %s", exported.code, exported.stderr)
	}
	for _, s := range secrets {
		if strings.Contains(exported.stdout, s) {
			t.Errorf("journal export shows %q of a pending edit", s)
		}
	}
	for _, want := range []string{`"sha256_before"`, `"sha256_after"`, `"path":"customer.email"`, `"path":"amount"`} {
		if !strings.Contains(exported.stdout, want) {
			t.Errorf("journal export lacks %s:\n%s", want, exported.stdout)
		}
	}

	if res := runDlqt(t, p.as(b.env, "carol"), "approve", id); res.code != 0 {
		t.Fatalf("approve exited %d: %s", res.code, res.stderr)
	}
	stop := b.consume(bedOrders)
	res = runDlqt(t, b.env, "replay", bedParking, "--id", "pay-1", "--to", "orders:order.created", "--canary", "1", "--observe", "500ms", "--yes")
	if res.code != 0 {
		t.Fatalf("replay exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	got := b.drainOrders(stop)
	want := `{"message_id":"pay-1","event_type":"order.created","amount":7,"password":"hunter2-s3cret","card":"4111111111111111","customer":{"email":"new.addr@example.org"}}`
	if len(got) != 1 || string(got[0].d.Body) != want {
		t.Errorf("the destination received %d message(s), want the edited body %s", len(got), want)
		for _, a := range got {
			t.Logf("  %s", a.d.Body)
		}
	}
	// The replay journals its plan: the edited body stays out of it too.
	exported = runDlqt(t, b.env, "journal", "export")
	for _, s := range []string{secrets[0], secrets[1], secrets[2], base64.StdEncoding.EncodeToString([]byte(want))} {
		if strings.Contains(exported.stdout, s) {
			t.Errorf("journal export after the replay shows %q", s)
		}
	}
	b.verifyJournal()
}

// TestAnInlineRevisionFromAnOlderJournalStillReplays: a journal written
// before revision bodies were kept apart has the edited body inline in its
// edit entry; it verifies, and a replay publishes that body.
func TestAnInlineRevisionFromAnOlderJournalStillReplays(t *testing.T) {
	b := newReplayBed(t, "edit-inline")
	ids := b.park(1)
	original := string(b.read(bedParking)[0].Body)
	edited := `{"message_id":"order-00000","event_type":"order.created","amount":31}`
	j, err := journal.Open(b.journal, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rev := map[string]any{"id": "rev-0ld0ld0ld", "message_id": ids[0], "vhost": b.cfg.Vhost, "queue": bedParking,
		"body": edited, "original_body": original, "sha256_before": approval.SHA256([]byte(original)), "sha256_after": approval.SHA256([]byte(edited)),
		"changes": []map[string]string{{"path": "amount", "before": "0", "after": "31"}}, "actor": "ana", "reason": "older dlqt", "at": "2026-11-30T10:00:00Z"}
	_, err = j.Append(journal.Entry{Action: triage.ActionEdit, Actor: "ana", Vhost: b.cfg.Vhost, Queue: bedParking, MessageIDs: []string{ids[0]},
		Reason: "older dlqt", Details: map[string]any{"revision_id": "rev-0ld0ld0ld", "revision": rev}})
	if cerr := j.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	b.verifyJournal().Close()

	// The revision was made from the very body parked: the dry run names it
	// and warns of nothing (TestStaleRevisionIsNotReplayedOverANewMessage
	// has the stale one).
	if res := runDlqt(t, b.env, "replay", bedParking, "--id", ids[0]); !strings.Contains(res.stdout, "publishes revision rev-0ld0ld0ld") || strings.Contains(res.stdout, "warning:") {
		t.Errorf("the dry run does not name the revision, or warns of it:\n%s%s", res.stdout, res.stderr)
	}
	stop := b.consume(bedOrders)
	res := runDlqt(t, b.env, "replay", bedParking, "--id", ids[0], "--canary", "1", "--observe", "500ms", "--yes")
	if res.code != 0 || !strings.Contains(res.stdout, "publishes revision rev-0ld0ld0ld") {
		t.Fatalf("replay exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if got := b.drainOrders(stop); len(got) != 1 || string(got[0].d.Body) != edited {
		t.Errorf("the destination received %d message(s), want the inline revision's body %s", len(got), edited)
	}
}
