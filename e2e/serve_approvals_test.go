package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// TestApprovalWorkflowOverSSHMovesExactlyTheProposedIDs: the whole
// approval workflow over `ssh ... -- CMD` on dlqt serve, each person
// identified by their session's key and checked against the users file the
// server re-read on SIGHUP. alice proposes a gated replay of two ids (exit
// 3, nothing moves); her own approval and viewer bob's are refused, as is
// running it before approval; carol approves; alice's run moves exactly
// those two ids; her edit of a third is a revision. The journal, exported over ssh, names alice and carol with
// their session keys' fingerprints, and verifies.
func TestApprovalWorkflowOverSSHMovesExactlyTheProposedIDs(t *testing.T) {
	b := newReplayBed(t, "approve-ssh")
	ids := b.park(3)
	s := serveGatingReplays(t, b)
	s.approversForOrders("alice", "bob", "carol")

	began := time.Now()
	res := s.ssh("alice", "replay", bedParking, "--id", ids[0], "--id", ids[2], "--canary", "1", "--observe", "500ms", "--yes", "--json")
	if res.code != 3 {
		t.Fatalf("a gated replay over ssh exited %d, want 3\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	t.Logf("proposal over ssh: %v", time.Since(began))
	want := []string{ids[0], ids[2]}
	var prop proposalOut
	if err := json.Unmarshal([]byte(res.stdout), &prop); err != nil || prop.Proposer != "alice" ||
		!slices.Equal(prop.MessageIDs, want) || !slices.Equal(prop.Approvers, []string{"carol"}) {
		t.Fatalf("proposal over ssh (approvers from the reloaded users file: carol): %v %+v\n%s", err, prop, res.stdout)
	}
	if n := b.depth(bedParking); n != 3 {
		t.Fatalf("the proposal moved messages: parking holds %d", n)
	}

	refused := []struct {
		who  string
		args []string
		code int
		want string
	}{
		{"alice", []string{"approve", prop.Proposal}, 1, "may not approve or reject their own"},
		{"bob", []string{"approve", prop.Proposal}, 2, "approve refused: bob is a viewer"},
		{"bob", []string{"run", prop.Proposal, "--yes"}, 2, "run refused: bob is a viewer"},
		{"carol", []string{"approve", prop.Proposal, "--signature", "-"}, 2, "--signature is not available over SSH"},
		{"alice", []string{"run", prop.Proposal, "--yes"}, 1, "pending"},
	}
	for _, r := range refused {
		if res := s.ssh(r.who, r.args...); res.code != r.code || !strings.Contains(res.stderr, r.want) {
			t.Errorf("%s: ssh -- %v: exit %d %q, want exit %d and %q", r.who, r.args, res.code, res.stderr, r.code, r.want)
		}
	}
	// ssh joins its arguments into one command line: quote as in a shell.
	began = time.Now()
	if res := s.ssh("carol", "approve", prop.Proposal, "--reason", "'checked the orders'"); res.code != 0 || !strings.Contains(res.stdout, "approved by carol (key "+s.peers["carol"].fingerprint+")") {
		t.Fatalf("carol's approval over ssh: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	t.Logf("approval over ssh: %v", time.Since(began))
	stop := b.consume(bedOrders)
	if res := s.ssh("alice", "run", prop.Proposal, "--yes"); res.code != 0 {
		t.Fatalf("run over ssh exited %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	b.waitDepth(bedParking, 1)
	time.Sleep(300 * time.Millisecond) // anything more would have arrived by now
	var got []string
	for _, a := range stop() {
		got = append(got, a.d.MessageId)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the destination received %v, want exactly %v", got, want)
	}
	if left := messageIDs(b.read(bedParking)); !slices.Equal(left, ids[1:2]) {
		t.Errorf("parking still holds %v, want %v", left, ids[1:2])
	}
	if res := s.ssh("alice", "run", prop.Proposal, "--yes"); res.code == 0 {
		t.Errorf("a second run of the proposal over ssh succeeded:\n%s", res.stdout)
	}
	// An edit over ssh is a revision journaled under the session's user;
	// the queue keeps the original.
	if res := s.ssh("alice", "edit", bedParking, "--id", ids[1], "--set", "amount=99", "--reason", "'typo in the amount'"); res.code != 0 ||
		!strings.Contains(res.stdout, "revision") || b.depth(bedParking) != 1 {
		t.Errorf("edit over ssh: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// A viewer's export shows the edit's hashes and changed paths, never a
	// body (inline, either would read {\"message_id\":\"order-00001\",...).
	if res := s.ssh("bob", "journal", "export"); res.code != 0 || strings.Contains(res.stdout, `\"`+ids[1]+`\"`) || !strings.Contains(res.stdout, `"sha256_after"`) {
		t.Errorf("a viewer's journal export over ssh (exit %d) shows an edit's body, or not its hashes:\n%s%s", res.code, res.stdout, res.stderr)
	}
	s.checkApprovalJournal(prop.Proposal)
}

// approversForOrders rewrites the server's users file so that the names
// approve for team orders (keeping each one's role and key), and has the
// server re-read it.
func (b *serveBed) approversForOrders(names ...string) {
	b.t.Helper()
	var text strings.Builder
	text.WriteString("users:\n")
	for _, name := range names {
		p := b.peers[name]
		pub, err := os.ReadFile(p.key + ".pub")
		if err != nil {
			b.t.Fatal(err)
		}
		fmt.Fprintf(&text, "  - name: %s\n    role: %s\n    approves: [orders]\n    keys: [%q]\n", name, p.role, strings.TrimSpace(string(pub)))
	}
	if err := os.WriteFile(b.users, []byte(text.String()), 0o600); err != nil {
		b.t.Fatal(err)
	}
	b.cmd.Process.Signal(syscall.SIGHUP)
	b.waitLog(fmt.Sprintf("SIGHUP: %d users from %s", len(names), b.users))
}

// checkApprovalJournal exports the journal over ssh and checks who did
// what to proposal id, with which session key; then verifies it over ssh.
func (b *serveBed) checkApprovalJournal(id string) {
	b.t.Helper()
	res := b.ssh("carol", "journal", "export")
	if res.code != 0 {
		b.t.Fatalf("journal export over ssh exited %d: %s", res.code, res.stderr)
	}
	wantActor := map[triage.Action]string{triage.ActionProposal: "alice", triage.ActionProposalApprove: "carol", triage.ActionProposalRun: "alice"}
	seen := map[triage.Action]int{}
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		var e journal.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			b.t.Fatalf("export line %q: %v", line, err)
		}
		who, ok := wantActor[e.Action]
		if !ok || e.Details["proposal_id"] != id {
			continue
		}
		seen[e.Action]++
		if fp := b.peers[who].fingerprint; e.Actor != who || e.Details["ssh_fingerprint"] != fp {
			b.t.Errorf("%s entry: actor %q key %v, want %s with %s", e.Action, e.Actor, e.Details["ssh_fingerprint"], who, fp)
		}
		if d, _ := e.Details["decision"].(map[string]any); e.Action == triage.ActionProposalApprove &&
			(d["key"] != b.peers["carol"].fingerprint || d["session"] != true) {
			b.t.Errorf("approval decision %v, want carol's session key", d)
		}
	}
	for action := range wantActor {
		if seen[action] == 0 {
			b.t.Errorf("the export has no %s entry for %s:\n%s", action, id, res.stdout)
		}
	}
	if res := b.ssh("bob", "journal", "verify"); res.code != 0 || !strings.Contains(res.stdout, "verified") {
		b.t.Errorf("journal verify over ssh: exit %d %s%s", res.code, res.stdout, res.stderr)
	}
}
