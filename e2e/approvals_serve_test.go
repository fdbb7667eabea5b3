package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// TestProposalOverServeIsTheSessionsAndApprovedBySignature: under dlqt
// serve, a gated replay over ssh becomes a proposal whose proposer is the
// session's key (exit 3 through ssh, nothing moved); carol approves it with
// her key's signature, alice's and viewer bob's approvals are refused, and
// the run moves exactly the proposed id. The journal names alice with her
// session's key fingerprint, and carol with her signing key.
func TestProposalOverServeIsTheSessionsAndApprovedBySignature(t *testing.T) {
	b := newReplayBed(t, "approve-serve")
	ids := b.park(3)
	dir := t.TempDir()
	cfg, users := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "approvers.yaml")
	policy := "owners:\n  - match: {event_type: \"order.*\"}\n    team: orders\napprovals:\n  replay: {min_messages: 1}\n"
	if err := os.WriteFile(cfg, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(slices.Clone(b.env), "DLQT_CONFIG="+cfg, "DLQT_USERS_FILE="+users)
	s := startServe(t, env)
	var text strings.Builder
	text.WriteString("users:\n")
	for _, name := range []string{"alice", "bob", "carol"} {
		p := s.peers[name]
		pub, err := os.ReadFile(p.key + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString("  - name: " + name + "\n    role: " + p.role + "\n    approves: [orders]\n    keys: [\"" + strings.TrimSpace(string(pub)) + "\"]\n")
	}
	if err := os.WriteFile(users, []byte(text.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	res := s.ssh("alice", "replay", bedParking, "--id", ids[1], "--canary", "1", "--observe", "500ms", "--yes", "--json")
	if res.code != 3 {
		t.Fatalf("a gated replay over ssh exited %d, want 3\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	var prop proposalOut
	if err := json.Unmarshal([]byte(res.stdout), &prop); err != nil || prop.Proposer != "alice" || !slices.Equal(prop.MessageIDs, ids[1:2]) {
		t.Fatalf("proposal over ssh: %v %+v\n%s", err, prop, res.stdout)
	}
	if n := b.depth(bedParking); n != 3 {
		t.Fatalf("the proposal moved messages: parking holds %d", n)
	}

	as := func(name string) []string { return append(slices.Clone(env), "DLQT_KEY="+s.peers[name].key) }
	for who, want := range map[string]string{"alice": "may not approve or reject their own", "bob": "bob is a viewer"} {
		if res := runDlqt(t, as(who), "approve", prop.Proposal); res.code == 0 || !strings.Contains(res.stderr, want) {
			t.Errorf("%s's approval: exit %d %s, want %q", who, res.code, res.stderr, want)
		}
	}
	if res := runDlqt(t, as("carol"), "approve", prop.Proposal); res.code != 0 {
		t.Fatalf("carol's approval exited %d: %s", res.code, res.stderr)
	}
	stop := b.consume(bedOrders)
	if res := runDlqt(t, as("alice"), "run", prop.Proposal, "--yes"); res.code != 0 {
		t.Fatalf("run exited %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if got := b.arrived(stop); !slices.Equal(got, ids[1:2]) {
		t.Errorf("the destination received %v, want %v", got, ids[1:2])
	}

	// verify checks the decisions' signatures against the users file, and
	// the checkpoint against the server's key (which it writes beside its own)
	b.env = append(env, "DLQT_SERVER_KEY="+filepath.Join(s.dir, "host_key.pub"))
	rs, err := b.verifyJournal().Records()
	if err != nil {
		t.Fatal(err)
	}
	var proposed, approved bool
	for _, r := range rs {
		switch r.Action {
		case triage.ActionProposal:
			proposed = r.Actor == "alice" && r.Details["ssh_fingerprint"] == s.peers["alice"].fingerprint && r.Details["key"] == s.peers["alice"].fingerprint
		case triage.ActionProposalApprove:
			d, _ := r.Details["decision"].(map[string]any)
			approved = r.Actor == "carol" && d["key"] == s.peers["carol"].fingerprint && d["signature"] != ""
		}
	}
	if !proposed || !approved {
		t.Errorf("journal: proposal by alice's session key %v, approval by carol's signature %v", proposed, approved)
	}
}
