package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/access"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
)

// proposalMade is what an action that needs approval returns: the
// proposal was journaled, nothing moved, and dlqt exits 3.
type proposalMade struct {
	id, action string
	count      int
}

func (p proposalMade) Error() string {
	return fmt.Sprintf("%s of %d message(s) needs a second person: proposal %s waits for an approver (dlqt approve %s); nothing was changed", p.action, p.count, p.id, p.id)
}

// ProposalJSON is what a gated action prints with --json, and one element
// of `dlqt proposals --json`.
type ProposalJSON struct {
	Proposal   string   `json:"proposal"`
	Action     string   `json:"action"`
	Count      int      `json:"count"`
	Vhost      string   `json:"vhost"`
	Queue      string   `json:"queue"`
	MessageIDs []string `json:"message_ids"`
	// MessageSHA256 is each message's body SHA-256, in the order of
	// MessageIDs: what run checks before it acts (absent on old proposals).
	MessageSHA256 []string      `json:"message_sha256,omitempty"`
	Plan          approval.Plan `json:"plan"`
	Teams         []string      `json:"teams"`
	Approvers     []string      `json:"approvers"`
	Proposer      string        `json:"proposer"`
	ProposedAt    time.Time     `json:"proposed_at"`
	ExpiresAt     time.Time     `json:"expires_at"`
	Hash          string        `json:"hash"`
	Status        string        `json:"status"`
	ApprovedBy    string        `json:"approved_by,omitempty"`
	RejectedBy    string        `json:"rejected_by,omitempty"`
	Reason        string        `json:"decision_reason,omitempty"`
	RunBy         string        `json:"run_by,omitempty"`
	Result        string        `json:"result,omitempty"`
}

// proposalJSON describes s at now; approvers are who may approve it.
func proposalJSON(s approval.State, now time.Time, approvers []string) ProposalJSON {
	p := s.Proposal
	out := ProposalJSON{
		Proposal: p.ID, Action: p.Action, Count: len(p.MessageIDs), Vhost: p.Vhost, Queue: p.Queue,
		MessageIDs: p.MessageIDs, MessageSHA256: p.MessageSHA256, Plan: p.Plan, Teams: p.Teams, Approvers: approvers, Proposer: p.Proposer,
		ProposedAt: p.ProposedAt, ExpiresAt: p.ExpiresAt, Hash: p.Hash(), Status: string(s.Status(now)),
		RunBy: s.RunBy, Result: s.Result,
	}
	if out.Approvers == nil {
		out.Approvers = []string{}
	}
	for _, d := range s.Decisions {
		if d.Approve {
			out.ApprovedBy, out.Reason = d.By, d.Reason
		} else {
			out.RejectedBy, out.Reason = d.By, d.Reason
		}
	}
	return out
}

// gated reports whether action on count messages needs approval; the
// caller proposes instead of acting.
func (a *app) gated(action string, count int) bool { return a.policy.Needs(action, count) }

// propose journals a proposal to do action on the chosen messages of
// queue with plan, signed by the proposer's key, prints it, and returns
// proposalMade (exit 3).
//
// before, when given, journals what the proposal is about (an edit's
// revision) first, once the proposal's id and proposer are known.
func (a *app) propose(w io.Writer, action, queue string, chosen []triage.Triaged, plan approval.Plan, asJSON bool, before ...func(approval.Proposal) error) error {
	us, err := a.loadUsers()
	if err != nil {
		return err
	}
	named, err := namedByBody(chosen)
	if err != nil {
		return err
	}
	teams := a.owners.Teams(queue, chosen)
	if len(teams) == 0 {
		teams = nil
	}
	// The proposer is whoever signs: sign a draft to learn who, then the
	// proposal naming them.
	draft := approval.New(action, a.vhost, queue, named, plan, teams, "", time.Now(), a.expireAfter)
	who, _, _, err := a.signature(us, draft.Hash(), "")
	if err != nil {
		return err
	}
	if !who.Role.MayAct() {
		return fmt.Errorf("%s is a viewer: a viewer may not propose a %s", who.Name, action)
	}
	p := approval.New(action, a.vhost, queue, named, plan, teams, who.Name, time.Now(), a.expireAfter)
	_, sig, fp, err := a.signature(us, p.Hash(), "")
	if err != nil {
		return err
	}
	for _, f := range before {
		if err := f(p); err != nil {
			return err
		}
	}
	j, err := a.openJournal()
	if err != nil {
		return err
	}
	rec := journal.NewRecorder(j, who.Name, a.host)
	err = rec.Record(triage.Record{
		Action: triage.ActionProposal, Vhost: p.Vhost, Queue: p.Queue, MessageIDs: p.MessageIDs, Reason: a.policy.Describe(action),
		Details: map[string]any{"proposal_id": p.ID, "proposal": p, "hash": p.Hash(), "signature": sig, "key": fp},
	})
	if err != nil {
		return err
	}
	s := approval.State{Proposal: p, Hash: p.Hash()}
	approvers := approverNames(us, p.Teams, p.Proposer)
	if asJSON {
		if err := writeJSON(w, proposalJSON(s, time.Now(), approvers)); err != nil {
			return err
		}
	} else {
		printProposal(w, s, time.Now(), approvers)
	}
	return proposalMade{id: p.ID, action: action, count: len(named)}
}

// namedByBody names each chosen message by id and the SHA-256 of its body,
// read back whole when the read kept only its index entry.
func namedByBody(chosen []triage.Triaged) ([]approval.Named, error) {
	out := make([]approval.Named, len(chosen))
	for i, t := range chosen {
		if t.Indexed() {
			whole, err := t.WithMessage()
			if err != nil {
				return nil, err
			}
			t = whole
		}
		out[i] = approval.Named{ID: t.ID, BodySHA256: triage.BodySHA256(t.Message.Body)}
	}
	return out, nil
}

// approverNames are the people of the users file who may approve for
// every one of teams (any approver when no owner rule matched), the
// proposer excepted.
func approverNames(us *access.Users, teams []string, proposer string) []string {
	var out []string
	if us == nil {
		return out
	}
	for _, u := range us.List() {
		if p := person(u); p.Name != proposer && p.Role != approval.RoleViewer && p.ApprovesFor(teams) {
			out = append(out, u.Name)
		}
	}
	return out
}

// printProposal writes what approval.State.Describe says of s, a line each.
func printProposal(w io.Writer, s approval.State, now time.Time, approvers []string) {
	for _, l := range s.Describe(now, approvers) {
		fmt.Fprintln(w, l)
	}
}

// decisionKeys are what journaled decisions are checked against: the
// keys of the users file (us may be nil: then no local decision holds)
// and the server's key, for decisions made in dlqt serve sessions.
func (a *app) decisionKeys(us *access.Users) (approval.Keys, error) {
	k := approval.Keys{}
	if us != nil {
		k.People = personKeys(us)
	}
	var err error
	k.Server, err = a.serverKey()
	return k, err
}

// serverKey is the public key of the dlqt serve whose sessions decide on
// this journal: its own in the server, else --server-key's file (a public
// key, as serve writes beside its host key), else the default host key's,
// if there is one. nil when none is known.
func (a *app) serverKey() (ssh.PublicKey, error) {
	if a.hostSigner != nil {
		return a.hostSigner.PublicKey(), nil
	}
	path := a.serverKeyFile
	if path == "" {
		path = defaultHostKeyPath() + ".pub"
	}
	pk, err := publicKeyAt(path)
	if errors.Is(err, fs.ErrNotExist) && a.serverKeyFile == "" {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("server key: %w", err)
	}
	return pk, nil
}

// publicKeyAt reads a public key file (authorized_keys form, as .pub).
func publicKeyAt(path string) (ssh.PublicKey, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pk, _, _, _, err := ssh.ParseAuthorizedKey(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pk, nil
}

// proposalStates folds the journal's proposals with only the decisions
// whose signatures hold: a decision appended by whoever can write the
// journal file, without a signature of the person or the server, decides
// nothing.
func (a *app) proposalStates(j approval.Journal) ([]approval.State, error) {
	if a.auditStream != "" {
		j = teamJournal{Journal: j, a: a}
	}
	states, err := approval.States(j)
	if err != nil {
		return nil, err
	}
	us, err := a.knownUsers()
	if err != nil {
		return nil, err
	}
	keys, err := a.decisionKeys(us)
	if err != nil {
		return nil, err
	}
	return approval.Trusted(states, keys, nil), nil
}

// knownUsers is the users file decisions are checked against, as
// loadUsers finds it (the server's, --users-file, or the default one);
// nil when there is none.
func (a *app) knownUsers() (*access.Users, error) {
	if a.session == nil && a.usersFile == "" {
		if _, err := os.Stat(defaultUsersPath()); err != nil {
			return nil, nil
		}
	}
	return a.loadUsers()
}

// findProposal is approval.Find over proposalStates.
func (a *app) findProposal(j approval.Journal, id string) (approval.State, error) {
	states, err := a.proposalStates(j)
	if err != nil {
		return approval.State{}, err
	}
	for _, s := range states {
		if s.Proposal.ID == id {
			return s, nil
		}
	}
	return approval.State{}, fmt.Errorf("%q: %w in journal %s", id, approval.ErrUnknown, j.Path())
}

// decisionSignature is who decides approve (or reject) of hash, with their
// signature of that decision and their key's fingerprint: with --key this
// process signs it; with armored (ssh-keygen -Y sign) that is checked; in
// a dlqt serve session the server signs it with its host key for the
// session's user, whom it identified by their key at login.
func (a *app) decisionSignature(us *access.Users, approve bool, hash, armored string) (u *access.User, sig, fingerprint string, err error) {
	if a.session != nil && armored == "" {
		if a.hostSigner == nil {
			return nil, "", "", errors.New("this dlqt serve has no host key to sign decisions with")
		}
		u := a.session.User
		sig, err := approval.SignDecision(approve, hash, u.Name, a.hostSigner)
		return u, sig, a.session.Fingerprint, err
	}
	if armored == "" {
		signer, err := a.signer()
		if err != nil {
			return nil, "", "", err
		}
		u, ok := us.ByKey(signer.PublicKey())
		if !ok {
			return nil, "", ssh.FingerprintSHA256(signer.PublicKey()), fmt.Errorf("%w: --key %s is in no user's keys", approval.ErrBadSignature, a.keyFile)
		}
		if armored, err = approval.SignDecision(approve, hash, u.Name, signer); err != nil {
			return nil, "", "", err
		}
	}
	name, fp, err := approval.DecisionSigner(approve, hash, armored, personKeys(us))
	if err != nil {
		return nil, "", fp, err
	}
	u, _ = us.ByName(name)
	return u, armored, fp, nil
}
