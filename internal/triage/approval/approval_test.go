package approval

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/triage"
)

func TestOwnersFirstMatchWins(t *testing.T) {
	o := Owners{
		{EventType: "shipment.*", Team: "shipping"},
		{Queue: "billing.*", Team: "billing"},
		{Queue: "*", Team: "platform"},
	}
	tests := []struct{ queue, eventType, want string }{
		{"orders.parking", "shipment.created", "shipping"},
		{"billing.parking", "shipment.created", "shipping"}, // the event type rule comes first
		{"billing.parking", "invoice.sent", "billing"},
		{"orders.parking", "", "platform"},
	}
	for _, tc := range tests {
		if got := o.Of(tc.queue, tc.eventType); got != tc.want {
			t.Errorf("Of(%q, %q) = %q, want %q", tc.queue, tc.eventType, got, tc.want)
		}
	}
	g := triage.Group{EventTypes: []string{"shipment.created", "invoice.sent"}}
	if got := o.OfGroup("billing.parking", g); got != "billing, shipping" {
		t.Errorf("OfGroup = %q", got)
	}
	if got := (Owners{{EventType: "x.*", Team: "x"}}).Of("q", ""); got != "" {
		t.Errorf("an event type rule matched a message without one: %q", got)
	}
}

func TestPolicyNeeds(t *testing.T) {
	p := Policy{GateReplay: {MinMessages: 1}, GateDiscard: {MinMessages: 100}, GateEdit: {}}
	tests := []struct {
		action string
		count  int
		want   bool
	}{
		{GateReplay, 1, true}, {GateReplay, 0, false},
		{GateDiscard, 99, false}, {GateDiscard, 100, true},
		{GateEdit, 1, true}, {GateReveal, 5, false},
	}
	for _, tc := range tests {
		if got := p.Needs(tc.action, tc.count); got != tc.want {
			t.Errorf("Needs(%s, %d) = %v, want %v", tc.action, tc.count, got, tc.want)
		}
	}
}

var t0 = time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)

func sample() Proposal {
	return New(GateReplay, "v", "shipping.parking", []Named{{"m2", SHA256([]byte(`{"n":2}`))}, {"m1", SHA256([]byte(`{"n":1}`))}},
		Plan{Selection: "ids", Rate: 2.5, Canary: 1, Observe: "5s"}, []string{"shipping"}, "alice", t0, 0)
}

// journaled runs a value through JSON as the journal does (maps of any).
func journaled(t *testing.T, v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestProposalHashSurvivesTheJournal(t *testing.T) {
	p := sample()
	if p.ExpiresAt != t0.Add(DefaultExpiry) || !strings.HasPrefix(p.ID, "p-") {
		t.Fatalf("proposal %+v", p)
	}
	s, err := proposed(triage.Recorded{Record: triage.Record{Action: triage.ActionProposal,
		Details: map[string]any{"proposal": journaled(t, p), "hash": p.Hash()}}})
	if err != nil || s.Proposal.Hash() != p.Hash() {
		t.Fatalf("round trip: %v, hash %s want %s", err, s.Proposal.Hash(), p.Hash())
	}
	changed := p
	changed.MessageIDs = []string{"m2", "m1", "m3"}
	if changed.Hash() == p.Hash() {
		t.Error("another selection has the same hash")
	}
	changed = p
	changed.Plan.Rate = 50
	if changed.Hash() == p.Hash() {
		t.Error("another plan has the same hash")
	}
	changed = p
	changed.MessageSHA256 = []string{p.MessageSHA256[0], SHA256([]byte(`{"n":250000}`))}
	if changed.Hash() == p.Hash() {
		t.Error("another body under the same id has the same hash")
	}
	if b := p.Bodies(); b["m1"] != SHA256([]byte(`{"n":1}`)) || b["m2"] != SHA256([]byte(`{"n":2}`)) {
		t.Errorf("bodies %v", b)
	}
	if _, err := proposed(triage.Recorded{Record: triage.Record{Action: triage.ActionProposal,
		Details: map[string]any{"proposal": journaled(t, changed), "hash": p.Hash()}}}); err == nil {
		t.Error("a proposal whose journaled hash differs was accepted")
	}
}

// records builds the journal of a proposal and the decisions on it.
func records(t *testing.T, p Proposal, steps ...triage.Recorded) []triage.Recorded {
	rs := []triage.Recorded{{Record: triage.Record{Action: triage.ActionProposal,
		Details: map[string]any{"proposal_id": p.ID, "proposal": journaled(t, p), "hash": p.Hash()}}, Actor: p.Proposer, Time: p.ProposedAt}}
	return append(rs, steps...)
}

func decision(t *testing.T, p Proposal, approve bool, by string, hash string) triage.Recorded {
	a := triage.ActionProposalReject
	if approve {
		a = triage.ActionProposalApprove
	}
	d := Decision{Approve: approve, By: by, At: t0.Add(time.Minute), Hash: hash}
	return triage.Recorded{Record: triage.Record{Action: a, Details: map[string]any{"proposal_id": p.ID, "decision": journaled(t, d)}}, Actor: by}
}

func run(p Proposal, by string) triage.Recorded {
	return triage.Recorded{Record: triage.Record{Action: triage.ActionProposalRun, Details: map[string]any{"proposal_id": p.ID}}, Actor: by, Time: t0.Add(2 * time.Minute)}
}

func TestStateMachine(t *testing.T) {
	p := sample()
	carol := Person{Name: "carol", Role: "operator", Approves: []string{"shipping"}}
	alice := Person{Name: "alice", Role: "operator", Approves: []string{"shipping"}}
	viewer := Person{Name: "vic", Role: RoleViewer, Approves: []string{"shipping"}}
	billing := Person{Name: "bill", Role: "operator", Approves: []string{"billing"}}
	soon, late := t0.Add(time.Hour), t0.Add(25*time.Hour)
	tests := []struct {
		name      string
		steps     []triage.Recorded
		at        time.Time
		status    Status
		decider   Person
		decideErr error
		runner    Person
		runErr    error
	}{
		{"a fresh proposal waits", nil, soon, StatusPending, carol, nil, alice, ErrNotApproved},
		{"self approval is refused", nil, soon, StatusPending, alice, ErrSelfApproval, alice, ErrNotApproved},
		{"a viewer may not approve", nil, soon, StatusPending, viewer, ErrNotApprover, alice, ErrNotApproved},
		{"another team's approver may not", nil, soon, StatusPending, billing, ErrNotApprover, alice, ErrNotApproved},
		{"approved runs", []triage.Recorded{decision(t, p, true, "carol", p.Hash())}, soon, StatusApproved, carol, ErrNotPending, alice, nil},
		{"a viewer may not run it", []triage.Recorded{decision(t, p, true, "carol", p.Hash())}, soon, StatusApproved, carol, ErrNotPending, viewer, ErrViewer},
		{"approved for another hash does not run", []triage.Recorded{decision(t, p, true, "carol", strings.Repeat("0", 64))}, soon, StatusApproved, carol, ErrNotPending, alice, ErrNotApproved},
		{"rejected never runs", []triage.Recorded{decision(t, p, false, "carol", p.Hash())}, soon, StatusRejected, carol, ErrNotPending, alice, ErrNotApproved},
		{"expired pending", nil, late, StatusExpired, carol, ErrNotPending, alice, ErrExpired},
		{"expired approved", []triage.Recorded{decision(t, p, true, "carol", p.Hash())}, late, StatusExpired, carol, ErrNotPending, alice, ErrExpired},
		{"run once", []triage.Recorded{decision(t, p, true, "carol", p.Hash()), run(p, "alice")}, soon, StatusRun, carol, ErrNotPending, alice, ErrAlreadyRun},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			states, err := Fold(records(t, p, tc.steps...))
			if err != nil || len(states) != 1 {
				t.Fatalf("fold: %v, %d states", err, len(states))
			}
			s := states[0]
			if got := s.Status(tc.at); got != tc.status {
				t.Errorf("status %s, want %s", got, tc.status)
			}
			if err := CanDecide(s, tc.decider, tc.at); !errors.Is(err, tc.decideErr) {
				t.Errorf("decide by %s: %v, want %v", tc.decider.Name, err, tc.decideErr)
			}
			if err := CanRun(s, tc.runner, tc.at); !errors.Is(err, tc.runErr) {
				t.Errorf("run by %s: %v, want %v", tc.runner.Name, err, tc.runErr)
			}
		})
	}
}

func TestFoldRefusesADecisionOnAnUnknownProposal(t *testing.T) {
	p := sample()
	if _, err := Fold([]triage.Recorded{decision(t, p, true, "carol", p.Hash())}); err == nil {
		t.Error("no error")
	}
}

func newKey(t *testing.T) (ssh.Signer, ssh.PublicKey) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s, s.PublicKey()
}

func TestSignatures(t *testing.T) {
	carolKey, carolPub := newKey(t)
	_, alicePub := newKey(t)
	strangerKey, _ := newKey(t)
	keys := []PersonKey{{"alice", alicePub}, {"carol", carolPub}}
	hash := sample().Hash()
	sig, err := Sign(hash, carolKey)
	if err != nil {
		t.Fatal(err)
	}
	if who, fp, err := Signer(hash, sig, keys); err != nil || who != "carol" || fp != ssh.FingerprintSHA256(carolPub) {
		t.Errorf("Signer = %q %q %v, want carol", who, fp, err)
	}
	if _, _, err := Signer(strings.Repeat("0", 64), sig, keys); !errors.Is(err, ErrBadSignature) {
		t.Errorf("another hash: %v", err)
	}
	other, _ := Sign(hash, strangerKey)
	if _, _, err := Signer(hash, other, keys); !errors.Is(err, ErrBadSignature) {
		t.Errorf("unknown key: %v", err)
	}
	if _, _, err := Signer(hash, "not a signature", keys); !errors.Is(err, ErrBadSignature) {
		t.Errorf("garbage: %v", err)
	}
}

// TestSshKeygenSignaturesVerify: a signature made with
// `ssh-keygen -Y sign -n dlqt-approval` is an approval.
func TestSshKeygenSignaturesVerify(t *testing.T) {
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Fatal("ssh-keygen is needed: ", err)
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "id")
	if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-f", keyFile).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	pubText, err := os.ReadFile(keyFile + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(pubText)
	if err != nil {
		t.Fatal(err)
	}
	hash := sample().Hash()
	cmd := exec.Command(keygen, "-Y", "sign", "-n", Namespace, "-f", keyFile)
	cmd.Stdin = strings.NewReader(hash)
	sig, err := cmd.Output()
	if err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v", err)
	}
	if b, _ := pem.Decode(sig); b == nil || b.Type != "SSH SIGNATURE" {
		t.Fatalf("not an SSH signature: %s", sig)
	}
	if who, _, err := Signer(hash, string(sig), []PersonKey{{"carol", pub}}); err != nil || who != "carol" {
		t.Errorf("Signer = %q, %v", who, err)
	}
}

// A journaled decision holds only when signed for what it decides: by a
// key of the person it names, or, made in a dlqt serve session, by the
// server's key for a session key of theirs.
func TestCheckDecision(t *testing.T) {
	carolKey, carolPub := newKey(t)
	serverKey, serverPub := newKey(t)
	otherKey, _ := newKey(t)
	keys := Keys{People: []PersonKey{{"carol", carolPub}}, Server: serverPub}
	hash := sample().Hash()
	signed := func(s ssh.Signer, text string) string {
		sig, err := Sign(text, s)
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	carolFP := ssh.FingerprintSHA256(carolPub)
	cases := []struct {
		name string
		d    Decision
		ok   bool
	}{
		{"carol's approval", Decision{Approve: true, By: "carol", Hash: hash, Signature: signed(carolKey, DecisionText(true, hash, "carol"))}, true},
		{"carol's rejection taken for an approval", Decision{Approve: true, By: "carol", Hash: hash, Signature: signed(carolKey, DecisionText(false, hash, "carol"))}, false},
		{"an approval of the hash alone", Decision{Approve: true, By: "carol", Hash: hash, Signature: signed(carolKey, hash)}, false},
		{"a rejection of the hash alone", Decision{By: "carol", Hash: hash, Signature: signed(carolKey, hash)}, true},
		{"unsigned", Decision{Approve: true, By: "carol", Hash: hash}, false},
		{"a session approval the server signed", Decision{Approve: true, By: "carol", Hash: hash, Key: carolFP, Session: true, Signature: signed(serverKey, DecisionText(true, hash, "carol"))}, true},
		{"a session approval nobody signed", Decision{Approve: true, By: "carol", Hash: hash, Key: carolFP, Session: true}, false},
		{"a session approval another key signed", Decision{Approve: true, By: "carol", Hash: hash, Key: carolFP, Session: true, Signature: signed(otherKey, DecisionText(true, hash, "carol"))}, false},
		{"a session approval carol signed herself", Decision{Approve: true, By: "carol", Hash: hash, Key: carolFP, Session: true, Signature: signed(carolKey, DecisionText(true, hash, "carol"))}, false},
		{"a session approval of another's session key", Decision{Approve: true, By: "carol", Hash: hash, Key: "SHA256:other", Session: true, Signature: signed(serverKey, DecisionText(true, hash, "carol"))}, false},
	}
	for _, c := range cases {
		if err := keys.CheckDecision(c.d, hash); (err == nil) != c.ok {
			t.Errorf("%s: CheckDecision = %v, want ok %v", c.name, err, c.ok)
		}
	}
	if err := (Keys{People: keys.People}).CheckDecision(cases[5].d, hash); err == nil {
		t.Error("a session approval held with no server key to check it")
	}
}
