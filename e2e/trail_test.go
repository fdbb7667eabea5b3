package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/trail"
)

// The team's trail on a stream, with the real binary: alice proposes a
// replay on bastion A, carol (her own key) sees and approves it on bastion
// B, alice runs it on A; each host keeps its own journal, and verify
// --stream on a third host finds both writers' chains intact. Before the
// audit stream, B's journal held no proposal: "proposal … not found".
func TestATeamApprovesAcrossHostsThroughTheStream(t *testing.T) {
	b, p := approvalBed(t, "trail-team", "")
	ids := b.park(4)
	chosen := []string{ids[1], ids[3]}
	host := func(name string) []string {
		home := t.TempDir()
		return append(slices.Clone(b.env), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
			"XDG_STATE_HOME="+filepath.Join(home, "state"), "DLQT_JOURNAL="+filepath.Join(home, "journal.db"),
			"DLQT_AUDIT_STREAM=dlqt.audit")
	}
	bastionA, bastionB, laptop := host("a"), host("b"), host("c")

	args := []string{"replay", bedParking, "--canary", "1", "--observe", "300ms", "--rate", "50", "--yes", "--json"}
	for _, id := range chosen {
		args = append(args, "--id", id)
	}
	res := runDlqt(t, p.as(bastionA, "alice"), args...)
	if res.code != 3 {
		t.Fatalf("the proposal on A exited %d, want 3\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	var prop proposalOut
	if err := json.Unmarshal([]byte(res.stdout), &prop); err != nil {
		t.Fatalf("stdout is not the proposal JSON: %v\n%s", err, res.stdout)
	}

	res = runDlqt(t, bastionB, "proposals", prop.Proposal)
	if res.code != 0 || !strings.Contains(res.stdout, "proposal "+prop.Proposal+": replay 2 message(s)") || !strings.Contains(res.stdout, "may approve: carol") {
		t.Fatalf("B does not see A's proposal: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	res = runDlqt(t, p.as(bastionB, "carol"), "approve", prop.Proposal, "--reason", "consumer fixed")
	if res.code != 0 || !strings.Contains(res.stdout, "approved by carol") {
		t.Fatalf("carol's approval on B exited %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}

	stop := b.consume(bedOrders)
	res = runDlqt(t, p.as(bastionA, "alice"), "run", prop.Proposal, "--yes")
	if res.code != 0 {
		t.Fatalf("alice's run on A exited %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if got := b.arrived(stop); !slices.Equal(got, chosen) {
		t.Errorf("the destination received %v, want exactly %v", got, chosen)
	}

	// Every host sees it run; a second run, from B this time, is refused.
	res = runDlqt(t, laptop, "proposals", "--json")
	var listed []proposalOut
	if err := json.Unmarshal([]byte(res.stdout), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("proposals --json on a third host: %v\n%s\n%s", err, res.stdout, res.stderr)
	}
	if l := listed[0]; l.Status != "run" || l.ApprovedBy != "carol" || l.RunBy != "alice" {
		t.Errorf("the third host lists %+v", l)
	}
	if res := runDlqt(t, p.as(bastionB, "alice"), "run", prop.Proposal, "--yes"); res.code == 0 || !strings.Contains(res.stderr, "already run") {
		t.Errorf("a second run on B was not refused (exit %d): %s", res.code, res.stderr)
	}
	res = runDlqt(t, laptop, "journal", "verify", "--stream")
	if res.code != 0 || !strings.Contains(res.stdout, "of 2 writers") || !strings.Contains(res.stdout, "every writer's chain intact") {
		t.Fatalf("verify --stream on a third host: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	t.Logf("verify --stream:\n%s", res.stdout)
	for _, h := range [][]string{bastionA, bastionB} {
		if res := runDlqt(t, h, "journal", "verify"); res.code != 0 || !strings.Contains(res.stdout, "the journal matches what the stream holds") {
			t.Errorf("journal verify: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
		}
	}
}

// In the TUI, the trail offline refuses an action in one line and moves
// nothing, while reading goes on; with the stream writable, the same
// discard is done and its entries are on the stream.
func TestTUIActsOnlyWhenTheTrailConfirms(t *testing.T) {
	b := newReplayBed(t, "tui-trail")
	ids := b.park(3)
	// A classic queue named as the stream: its entries could be taken
	// out, so dlqt refuses to write its trail there.
	if _, err := b.ch.QueueDeclare("not.a.stream", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	discard := func(s *term) {
		s.waitFor("all 3 messages", "rejected")
		discardFirst(s, ids)
	}
	s := startTerm(t, 120, 30, append(slices.Clone(b.env), "DLQT_AUDIT_STREAM=not.a.stream"), "--queue", bedParking)
	s.waitFor("the trail is offline (audit stream") // said as it starts, before any action
	discard(s)
	s.waitFor("discard not done", "the trail is offline")
	s.keys("Escape")
	s.waitFor("reason_code") // reading goes on
	s.keys("q")
	for deadline := time.Now().Add(10 * time.Second); !s.exited() && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	b.waitDepth(bedParking, 3)

	s = startTerm(t, 120, 30, append(slices.Clone(b.env), "DLQT_AUDIT_STREAM=dlqt.audit"), "--queue", bedParking)
	discard(s)
	s.waitFor("done: discarded 1 from "+bedParking, "all 2 messages")
	s.keys("q")
	b.waitDepth(bedParking, 2)
	res := runDlqt(t, append(slices.Clone(b.env), "DLQT_AUDIT_STREAM=dlqt.audit"), "journal", "verify")
	if res.code != 0 || !strings.Contains(res.stdout, "the journal matches what the stream holds") {
		t.Fatalf("journal verify after the TUI's discard: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

// The journal screen's T shows the team's trail: every writer's entries
// from the audit stream, whose they are, and how the chains stand; T again
// goes back to this host's journal.
func TestTUIShowsTheTeamsTrail(t *testing.T) {
	b := newReplayBed(t, "tui-team")
	ids := b.park(3)
	host := func(actor string) []string {
		home := t.TempDir()
		return append(slices.Clone(b.env), "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"),
			"DLQT_JOURNAL="+filepath.Join(home, "journal.db"), "DLQT_AUDIT_STREAM=dlqt.audit", "DLQT_ACTOR="+actor)
	}
	for i, actor := range []string{"ana", "bo"} {
		if res := runDlqt(t, host(actor), "discard", bedParking, "--id", ids[i], "--reason", "dup of "+actor, "--yes"); res.code != 0 {
			t.Fatalf("%s's discard: exit %d\n%s\n%s", actor, res.code, res.stdout, res.stderr)
		}
	}
	dir := t.TempDir()
	s := startTermIn(t, dir, 120, 30, host("cy"), "--queue", bedParking)
	s.waitFor("the only message")
	s.keys("J")
	s.waitFor("— 0 entries") // cy's own journal is empty
	s.keys("T")
	s.waitFor("team trail: audit stream dlqt.audit", "4 records of 2 writers, every writer's chain intact",
		"ana@", "bo@", "dup of ana", "dup of bo", "discarded 1")
	s.keys("Enter")
	s.waitFor("writer", "stream offset")
	s.keys("Escape")
	s.waitFor("seq time (UTC)")

	// E exports the team's trail as dlqt journal export --stream does,
	// and the export, journalled by cy, is on the stream too.
	s.keys("E")
	scr := s.waitFor("exported 4 records of the audit stream dlqt.audit to "+dir, "5 records of 3 writers")
	files, _ := filepath.Glob(filepath.Join(dir, "dlqt-trail-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("trail exports in the working directory: %v\n%s", files, scr)
	}
	body, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rs []trail.Record
	for i, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		r, err := trail.Decode([]byte(line), int64(i))
		if err != nil {
			t.Fatalf("line %d of the export: %v", i+1, err)
		}
		rs = append(rs, r)
	}
	if chains, problems := trail.Verify(rs, nil); len(rs) != 4 || len(chains) != 2 || len(problems) != 0 {
		t.Fatalf("the export: %d records of %d writers, problems %v; want 4 of 2, none", len(rs), len(chains), problems)
	}
	if info, err := os.Stat(files[0]); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("export file mode: %v %v", info, err)
	}

	s.keys("T")
	s.waitGone("team trail: audit stream")
	s.waitFor("journal ", "export")
}

// A responder who may read and discard but not write the team's trail
// (no write on amq.default) is told so as the TUI starts, before choosing
// an action, and the action is then refused with nothing moved.
func TestTUISaysAsItStartsThatTheTrailCannotBeWritten(t *testing.T) {
	b := newReplayBed(t, "tui-trail-ro")
	ids := b.park(2)
	if _, err := b.ch.QueueDeclare("dlqt.audit", true, false, false, false, amqp.Table{"x-queue-type": "stream"}); err != nil {
		t.Fatal(err)
	}
	as, _ := brokertest.User(t, b.cfg, &brokertest.Perms{Configure: ".*", Write: `^dlqt\.lease\.|^amq\.gen-`, Read: ".*"}, "management")
	env := append(brokerEnv(t, as), "DLQT_JOURNAL="+filepath.Join(t.TempDir(), "journal.db"), "DLQT_AUDIT_STREAM=dlqt.audit")
	s := startTerm(t, 120, 30, env, "--queue", bedParking)
	s.waitFor("all 2 messages", "the trail is offline (audit stream \"dlqt.audit\" cannot be written: ACCESS_REFUSED")
	discardFirst(s, ids)
	s.waitFor("discard not done", "(the trail is offline: nothing was done)")
	s.keys("q")
	b.waitDepth(bedParking, 2)
}

// discardFirst opens the parking queue's one group, whose messages are
// ids, and discards the first message for good, reason "duplicate".
func discardFirst(s *term, ids []string) {
	s.keys("Enter")
	s.waitFor(ids[0], ids[len(ids)-1])
	s.keys("x")
	s.waitFor("Discard 1 message from " + bedParking)
	s.typeText("duplicate")
	s.keys("Enter")
	s.waitFor("Discard for good?")
	s.keys("y")
}
