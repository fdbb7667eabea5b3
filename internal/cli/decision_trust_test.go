package cli

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
)

// decisionBed is a journal holding one proposal of alice's, a users file
// naming alice and carol (operators) with their keys, and the flags that
// point dlqt at them.
type decisionBed struct {
	dir, journal string
	keys         map[string]ssh.Signer
	proposal     approval.Proposal
	flags        []string
}

func newDecisionBed(t *testing.T) *decisionBed {
	t.Helper()
	isolate(t)
	b := &decisionBed{dir: t.TempDir(), keys: map[string]ssh.Signer{}}
	var users strings.Builder
	users.WriteString("users:\n")
	for _, name := range []string{"alice", "carol"} {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ssh.NewSignerFromKey(priv)
		if err != nil {
			t.Fatal(err)
		}
		b.keys[name] = s
		users.WriteString("  - name: " + name + "\n    role: operator\n    approves: [orders]\n    keys: [\"" + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey()))) + "\"]\n")
	}
	usersFile := filepath.Join(b.dir, "users.yaml")
	if err := os.WriteFile(usersFile, []byte(users.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	b.journal = filepath.Join(b.dir, "journal.db")
	b.flags = []string{"--journal", b.journal, "--users-file", usersFile, "--amqp-url", "amqp://guest:guest@" + closedPort(t) + "/", "--mgmt-url", "http://" + closedPort(t)}
	// made by hand rather than with approval.New, whose arguments another
	// branch changes (messages named by id and body hash)
	now := time.Now().UTC().Truncate(time.Second)
	b.proposal = approval.Proposal{Action: approval.GateDiscard, Vhost: "/", Queue: "orders.parking", MessageIDs: []string{"m-1"},
		Plan: approval.Plan{Reason: "poison"}, Teams: []string{"orders"}, Proposer: "alice", ProposedAt: now, ExpiresAt: now.Add(time.Hour)}
	b.proposal.ID = "p-" + b.proposal.Hash()[:10]
	b.append(t, journal.Entry{Actor: "alice", Action: triage.ActionProposal, Vhost: "/", Queue: "orders.parking", MessageIDs: []string{"m-1"},
		Details: map[string]any{"proposal_id": b.proposal.ID, "proposal": b.proposal, "hash": b.proposal.Hash()}})
	return b
}

// append writes e to the journal as any script with write access to the
// file can: chained, through the journal's own code.
func (b *decisionBed) append(t *testing.T, e journal.Entry) {
	t.Helper()
	j, err := journal.Open(b.journal, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := j.Append(e); err != nil {
		t.Fatal(err)
	}
}

func (b *decisionBed) dlqt(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return run(t, Assets{}, append(args, b.flags...)...)
}

// status is the proposal's status as dlqt proposals --json says it.
func (b *decisionBed) status(t *testing.T) string {
	t.Helper()
	out, stderr, code := b.dlqt(t, "proposals", "--json")
	var rows []ProposalJSON
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != 1 {
		t.Fatalf("proposals --json: exit %d %v\n%s%s", code, err, out, stderr)
	}
	return rows[0].Status
}

// signedBy writes carol's signature of text to a file for --signature.
func (b *decisionBed) signedBy(t *testing.T, name, text string) string {
	t.Helper()
	sig, err := approval.Sign(text, b.keys[name])
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(b.dir, "sig-"+strings.ReplaceAll(text[:min(len(text), 12)], " ", "_"))
	if err := os.WriteFile(f, []byte(sig), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// A signature says what it decides: approve --signature takes only carol's
// signature of "approve HASH carol". Her rejection's signature, her
// signature of the hash alone (what reject --signature took before, which
// approve took as well) and a signature naming someone else are refused,
// and the proposal stays pending.
func TestApproveTakesOnlyASignatureOfThatApproval(t *testing.T) {
	b := newDecisionBed(t)
	hash := b.proposal.Hash()
	for what, text := range map[string]string{
		"the hash alone":      hash,
		"a rejection":         approval.DecisionText(false, hash, "carol"),
		"another's approval":  approval.DecisionText(true, hash, "alice"),
		"another proposal's ": approval.DecisionText(true, strings.Repeat("0", 64), "carol"),
	} {
		out, stderr, code := b.dlqt(t, "approve", b.proposal.ID, "--signature", b.signedBy(t, "carol", text))
		if code == 0 || !strings.Contains(stderr, "signature") {
			t.Errorf("approve with carol's signature of %s: exit %d\n%s%s", what, code, out, stderr)
		}
		if st := b.status(t); st != "pending" {
			t.Fatalf("after approve with %s the proposal is %s, want pending", what, st)
		}
	}
	out, stderr, code := b.dlqt(t, "approve", b.proposal.ID, "--signature", b.signedBy(t, "carol", approval.DecisionText(true, hash, "carol")))
	if code != 0 || !strings.Contains(out, "approved by carol") {
		t.Fatalf("approve with carol's signature of her approval: exit %d\n%s%s", code, out, stderr)
	}
	if st := b.status(t); st != "approved" {
		t.Errorf("the proposal is %s, want approved", st)
	}
}

// Issue 22 item 7: a script that can write the journal file appended a
// session decision "approved by carol" with her public fingerprint. The
// chain holds, but no server signed it: proposals ignores it, run refuses,
// and verify names the entry.
func TestAForgedSessionApprovalApprovesNothing(t *testing.T) {
	b := newDecisionBed(t)
	forged := approval.Decision{Approve: true, By: "carol", At: time.Now().UTC(), Reason: "lgtm", Hash: b.proposal.Hash(),
		Key: ssh.FingerprintSHA256(b.keys["carol"].PublicKey()), Session: true}
	b.append(t, journal.Entry{Actor: "carol", Action: triage.ActionProposalApprove, Vhost: "/", Queue: "orders.parking", MessageIDs: []string{"m-1"},
		Details: map[string]any{"proposal_id": b.proposal.ID, "decision": forged}})
	if st := b.status(t); st != "pending" {
		t.Errorf("the forged approval made the proposal %s, want pending", st)
	}
	out, stderr, code := b.dlqt(t, "run", b.proposal.ID, "--yes", "--actor", "alice")
	if code == 0 || !strings.Contains(stderr, "pending") {
		t.Errorf("run of a proposal only a forged entry approves: exit %d, want refused as pending\n%s%s", code, out, stderr)
	}
	out, stderr, code = b.dlqt(t, "journal", "verify")
	if code == 0 || !strings.Contains(stderr, "entry 2: signature") {
		t.Errorf("verify: exit %d, want a failure naming entry 2's signature\n%s%s", code, out, stderr)
	}
}

// Issue 22 item 7: a journal re-chained after an actor was changed, with
// its head file rewritten to match, verified as intact. Every append now
// signs a checkpoint beside the journal, and verify compares the file with
// it.
func TestARechainedJournalFailsItsSignedCheckpoint(t *testing.T) {
	b := newDecisionBed(t)
	for range 2 { // entries a dlqt appends, signing the checkpoint each time
		if out, stderr, code := b.dlqt(t, "journal", "export", "--out", filepath.Join(b.dir, "export.jsonl")); code != 0 {
			t.Fatalf("export: exit %d\n%s%s", code, out, stderr)
		}
	}
	out, stderr, code := b.dlqt(t, "journal", "verify")
	if code != 0 || strings.Contains(out, "note:") {
		t.Fatalf("verify of the untouched journal: exit %d\n%s%s", code, out, stderr)
	}
	rechain(t, b.journal, func(e *journal.Entry) {
		if e.Action == triage.ActionProposal {
			e.Actor = "mallory"
		}
	})
	out, stderr, code = b.dlqt(t, "journal", "verify")
	if code == 0 || !strings.Contains(stderr, "head does not match the signed checkpoint") {
		t.Errorf("verify of the re-chained journal: exit %d, want the checkpoint named\n%s%s", code, out, stderr)
	}
	// nor does a dlqt add to it, which would sign the forged chain anew
	out, stderr, code = b.dlqt(t, "journal", "export", "--out", filepath.Join(b.dir, "again.jsonl"))
	if code == 0 || !strings.Contains(stderr, "head does not match the signed checkpoint") {
		t.Errorf("export (which journals itself) on the re-chained journal: exit %d, want refused\n%s%s", code, out, stderr)
	}
	if out, stderr, code = b.dlqt(t, "journal", "verify"); code == 0 {
		t.Errorf("after a refused action the re-chained journal verifies:\n%s%s", out, stderr)
	}
}

// rechain rewrites the journal at path with change applied to each entry,
// chained anew, and its head file to match: what a script that can write
// the file does to change history.
func rechain(t *testing.T, path string, change func(*journal.Entry)) {
	t.Helper()
	j, err := journal.OpenReadOnly(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	es, err := j.Entries()
	j.Close()
	if err != nil {
		t.Fatal(err)
	}
	forged := filepath.Join(t.TempDir(), "forged.db")
	f, err := journal.Open(forged, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		change(&e)
		if _, err := f.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	for _, suffix := range []string{"", ".head"} {
		if err := os.Rename(forged+suffix, path+suffix); err != nil {
			t.Fatal(err)
		}
	}
}

// Decisions are checked against the users file approve found, the default
// one included: an approval signed with --key holds without --users-file.
func TestADecisionHoldsAgainstTheDefaultUsersFile(t *testing.T) {
	b := newDecisionBed(t)
	users := b.flags[3]
	b.flags = append(b.flags[:2:2], b.flags[4:]...) // no --users-file
	data, err := os.ReadFile(users)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(defaultUsersPath()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(defaultUsersPath(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	sig := b.signedBy(t, "carol", approval.DecisionText(true, b.proposal.Hash(), "carol"))
	if out, stderr, code := b.dlqt(t, "approve", b.proposal.ID, "--signature", sig); code != 0 {
		t.Fatalf("approve: exit %d\n%s%s", code, out, stderr)
	}
	if st := b.status(t); st != "approved" {
		t.Errorf("the proposal is %s, want approved", st)
	}
}

// journal verify lets go of the journal when it is done: under dlqt serve
// it runs in the server's process, and the read-only handle it kept held a
// shared lock that made every later write of the server wait and fail.
func TestVerifyLetsGoOfTheJournal(t *testing.T) {
	b := newDecisionBed(t)
	if out, stderr, code := b.dlqt(t, "journal", "verify"); code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", code, out, stderr)
	}
	if out, stderr, code := b.dlqt(t, "journal", "export", "--out", filepath.Join(b.dir, "after-verify.jsonl")); code != 0 {
		t.Errorf("export (a write) in the process that verified: exit %d\n%s%s", code, out, stderr)
	}
}
