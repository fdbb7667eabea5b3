package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// people are the approval tests' three users with generated ed25519 keys:
// alice proposes, carol approves for team orders, vic is a viewer who
// also lists orders under approves (and still may not approve).
type people struct {
	dir   string
	keys  map[string]string // name -> private key file
	users string            // the users file
}

func newPeople(t *testing.T) people {
	t.Helper()
	p := people{dir: t.TempDir(), keys: map[string]string{}}
	var users strings.Builder
	users.WriteString("users:\n")
	for _, u := range []struct{ name, role string }{{"alice", "operator"}, {"carol", "operator"}, {"vic", "viewer"}} {
		key := filepath.Join(p.dir, u.name)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", u.name, "-f", key).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
		pub, err := os.ReadFile(key + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		p.keys[u.name] = key
		users.WriteString("  - name: " + u.name + "\n    role: " + u.role + "\n    approves: [orders]\n    keys: [\"" + strings.TrimSpace(string(pub)) + "\"]\n")
	}
	p.users = filepath.Join(p.dir, "users.yaml")
	if err := os.WriteFile(p.users, []byte(users.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// as is env acting with name's key.
func (p people) as(env []string, name string) []string {
	return append(slices.Clone(env), "DLQT_KEY="+p.keys[name])
}

// approvalBed is a replay bed whose config gives order.* to team orders
// and asks a second person for every replay and discard.
func approvalBed(t *testing.T, prefix, expire string) (*replayBed, people) {
	t.Helper()
	b := newReplayBed(t, prefix)
	p := newPeople(t)
	cfg := filepath.Join(p.dir, "config.yaml")
	text := "owners:\n  - match: {event_type: \"order.*\"}\n    team: orders\napprovals:\n  replay: {min_messages: 1}\n  discard: {min_messages: 1}\n"
	if expire != "" {
		text += "  expire_after: " + expire + "\n"
	}
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	b.env = append(b.env, "DLQT_CONFIG="+cfg, "DLQT_USERS_FILE="+p.users)
	return b, p
}

type proposalOut struct {
	Proposal   string   `json:"proposal"`
	Action     string   `json:"action"`
	Count      int      `json:"count"`
	MessageIDs []string `json:"message_ids"`
	Teams      []string `json:"teams"`
	Approvers  []string `json:"approvers"`
	Proposer   string   `json:"proposer"`
	Hash       string   `json:"hash"`
	Status     string   `json:"status"`
	ApprovedBy string   `json:"approved_by"`
	RunBy      string   `json:"run_by"`
}

func TestApprovedReplayMovesExactlyTheProposedIDs(t *testing.T) {
	b, p := approvalBed(t, "approve-replay", "")
	ids := b.park(5)
	chosen := []string{ids[0], ids[2], ids[4]}
	args := []string{"replay", bedParking, "--canary", "1", "--observe", "500ms", "--rate", "50", "--yes", "--json"}
	for _, id := range chosen {
		args = append(args, "--id", id)
	}
	began := time.Now()
	res := runDlqt(t, p.as(b.env, "alice"), args...)
	t.Logf("propose (browse, sign, journal): %s", time.Since(began).Round(time.Millisecond))
	if res.code != 3 {
		t.Fatalf("a replay that needs approval exited %d, want 3\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	var prop proposalOut
	if err := json.Unmarshal([]byte(res.stdout), &prop); err != nil {
		t.Fatalf("stdout is not the proposal JSON: %v\n%s", err, res.stdout)
	}
	if prop.Proposal == "" || prop.Action != "replay" || prop.Count != 3 || !slices.Equal(prop.MessageIDs, chosen) ||
		prop.Proposer != "alice" || !slices.Equal(prop.Teams, []string{"orders"}) || !slices.Equal(prop.Approvers, []string{"carol"}) {
		t.Errorf("proposal %+v", prop)
	}
	if n, m := b.depth(bedParking), b.depth(bedOrders); n != 5 || m != 0 {
		t.Fatalf("the proposal moved messages: parking %d (want 5), orders %d (want 0)", n, m)
	}

	// Four eyes: alice may not approve her own proposal, vic is a viewer,
	// and a run before the approval is refused.
	for _, who := range []string{"alice", "vic"} {
		if res := runDlqt(t, p.as(b.env, who), "approve", prop.Proposal); res.code == 0 {
			t.Errorf("%s approved: %s", who, res.stdout)
		} else if want := map[string]string{"alice": "may not approve or reject their own", "vic": "vic is a viewer"}[who]; !strings.Contains(res.stderr, want) {
			t.Errorf("%s's refusal says %q, want %q", who, res.stderr, want)
		}
	}
	if res := runDlqt(t, p.as(b.env, "alice"), "run", prop.Proposal, "--yes"); res.code == 0 || !strings.Contains(res.stderr, "pending") {
		t.Errorf("an unapproved proposal ran (exit %d): %s", res.code, res.stderr)
	}

	// The approver reads it whole: ids, plan, who may approve, the hash.
	res = runDlqt(t, b.env, "proposals", prop.Proposal)
	for _, want := range []string{"proposal " + prop.Proposal + ": replay 3 message(s)", "may approve: carol", "hash " + prop.Hash, "plan canary: 1", "plan observe: 500ms", chosen[2]} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("proposals %s lacks %q:\n%s", prop.Proposal, want, res.stdout)
		}
	}

	// carol approves with a signature ssh-keygen made of "approve HASH carol".
	sign := exec.Command("ssh-keygen", "-Y", "sign", "-n", "dlqt-approval", "-f", p.keys["carol"])
	sign.Stdin = strings.NewReader("approve " + prop.Hash + " carol")
	sig, err := sign.Output()
	if err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v", err)
	}
	sigFile := filepath.Join(p.dir, "carol.sig")
	if err := os.WriteFile(sigFile, sig, 0o600); err != nil {
		t.Fatal(err)
	}
	began = time.Now()
	res = runDlqt(t, b.env, "approve", prop.Proposal, "--signature", sigFile, "--reason", "orders consumer fixed in 4.2.1")
	t.Logf("approve (verify the ssh-keygen signature, journal): %s", time.Since(began).Round(time.Millisecond))
	if res.code != 0 || !strings.Contains(res.stdout, "approved by carol") {
		t.Fatalf("carol's approval exited %d: %s%s", res.code, res.stdout, res.stderr)
	}

	stop := b.consume(bedOrders)
	res = runDlqt(t, p.as(b.env, "alice"), "run", prop.Proposal, "--yes")
	if res.code != 0 {
		t.Fatalf("run exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if got := b.arrived(stop); !slices.Equal(got, chosen) {
		t.Errorf("the destination received %v, want exactly %v", got, chosen)
	}
	if left := messageIDs(b.read(bedParking)); !slices.Equal(left, []string{ids[1], ids[3]}) {
		t.Errorf("the parking queue holds %v, want the two not proposed", left)
	}
	if res := runDlqt(t, p.as(b.env, "alice"), "run", prop.Proposal, "--yes"); res.code == 0 || !strings.Contains(res.stderr, "already run") {
		t.Errorf("a second run was not refused (exit %d): %s", res.code, res.stderr)
	}

	res = runDlqt(t, b.env, "proposals", "--json")
	var listed []proposalOut
	if err := json.Unmarshal([]byte(res.stdout), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("proposals --json: %v\n%s", err, res.stdout)
	}
	if l := listed[0]; l.Status != "run" || l.ApprovedBy != "carol" || l.RunBy != "alice" {
		t.Errorf("listed %+v", l)
	}
	checkApprovalJournal(t, b.verifyJournal(), prop.Proposal)
}

// checkApprovalJournal: the verified journal names alice for the proposal
// and the run, carol (by her key) for the approval, and the replay ran
// after the approval.
func checkApprovalJournal(t *testing.T, j *journal.Journal, id string) {
	t.Helper()
	rs, err := j.Records()
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, r := range rs {
		if pid, _ := r.Details["proposal_id"].(string); pid == id || r.Action == triage.ActionReplayStart {
			seen = append(seen, string(r.Action)+":"+r.Actor)
		}
	}
	want := []string{"proposal:alice", "proposal-approve:carol", "proposal-run:alice", "replay-start:alice", "proposal-run:alice"}
	if !slices.Equal(seen, want) {
		t.Errorf("journal shows %v, want %v", seen, want)
	}
}

func TestExpiredProposalIsRefused(t *testing.T) {
	b, p := approvalBed(t, "approve-expired", "2s")
	ids := b.park(2)
	res := runDlqt(t, p.as(b.env, "alice"), "discard", bedParking, "--id", ids[0], "--reason", "duplicate of a settled order", "--yes")
	if res.code != 3 || !strings.Contains(res.stderr, "needs a second person") {
		t.Fatalf("discard exited %d, want 3\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	id := strings.Fields(strings.TrimPrefix(res.stdout, "proposal "))[0]
	id = strings.TrimSuffix(id, ":")
	if res := runDlqt(t, p.as(b.env, "carol"), "approve", id); res.code != 0 {
		t.Fatalf("approve exited %d: %s", res.code, res.stderr)
	}
	time.Sleep(2500 * time.Millisecond)
	res = runDlqt(t, p.as(b.env, "alice"), "run", id, "--yes")
	if res.code == 0 || !strings.Contains(res.stderr, "expired") {
		t.Errorf("an expired proposal ran (exit %d): %s%s", res.code, res.stdout, res.stderr)
	}
	if n := b.depth(bedParking); n != 2 {
		t.Errorf("parking holds %d, want 2: nothing may move", n)
	}
}

// TestRejectedProposalNeverRuns: a rejection needs a reason and the
// approver's key; after it the proposal is rejected for good.
func TestRejectedProposalNeverRuns(t *testing.T) {
	b, p := approvalBed(t, "approve-reject", "")
	ids := b.park(1)
	res := runDlqt(t, p.as(b.env, "alice"), "replay", bedParking, "--id", ids[0], "--yes", "--json")
	var prop proposalOut
	if err := json.Unmarshal([]byte(res.stdout), &prop); err != nil || res.code != 3 {
		t.Fatalf("replay exited %d: %v\n%s%s", res.code, err, res.stdout, res.stderr)
	}
	if res := runDlqt(t, p.as(b.env, "carol"), "reject", prop.Proposal); res.code != 2 || !strings.Contains(res.stderr, "--reason") {
		t.Errorf("a reject without a reason exited %d: %s", res.code, res.stderr)
	}
	if res := runDlqt(t, p.as(b.env, "carol"), "reject", prop.Proposal, "--reason", "the consumer is still broken"); res.code != 0 || !strings.Contains(res.stdout, "rejected by carol") {
		t.Fatalf("reject exited %d: %s%s", res.code, res.stdout, res.stderr)
	}
	for _, who := range []string{"carol", "alice"} {
		if res := runDlqt(t, p.as(b.env, who), "approve", prop.Proposal); res.code == 0 || !strings.Contains(res.stderr, "is rejected") {
			t.Errorf("%s approved a rejected proposal (exit %d): %s", who, res.code, res.stderr)
		}
	}
	if res := runDlqt(t, p.as(b.env, "alice"), "run", prop.Proposal, "--yes"); res.code == 0 || !strings.Contains(res.stderr, "is rejected") {
		t.Errorf("a rejected proposal ran (exit %d): %s", res.code, res.stderr)
	}
	if n := b.depth(bedParking); n != 1 {
		t.Errorf("parking holds %d, want 1", n)
	}
	res = runDlqt(t, b.env, "proposals")
	if !strings.Contains(res.stdout, "rejected by carol: the consumer is still broken") {
		t.Errorf("proposals: %s", res.stdout)
	}
}

// arrived waits until queue orders is drained by stop's consumer (at most
// 5 s), then stops it and returns the ids it received, sorted.
func (b *replayBed) arrived(stop func() []arrival) []string {
	deadline := time.Now().Add(5 * time.Second)
	for b.depth(bedOrders) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	var got []string
	for _, a := range stop() {
		got = append(got, a.d.MessageId)
	}
	slices.Sort(got)
	return got
}
