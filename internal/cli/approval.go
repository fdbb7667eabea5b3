package cli

import (
	"fmt"
	"io"
	"time"

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
	Proposal   string        `json:"proposal"`
	Action     string        `json:"action"`
	Count      int           `json:"count"`
	Vhost      string        `json:"vhost"`
	Queue      string        `json:"queue"`
	MessageIDs []string      `json:"message_ids"`
	Plan       approval.Plan `json:"plan"`
	Teams      []string      `json:"teams"`
	Approvers  []string      `json:"approvers"`
	Proposer   string        `json:"proposer"`
	ProposedAt time.Time     `json:"proposed_at"`
	ExpiresAt  time.Time     `json:"expires_at"`
	Hash       string        `json:"hash"`
	Status     string        `json:"status"`
	ApprovedBy string        `json:"approved_by,omitempty"`
	RejectedBy string        `json:"rejected_by,omitempty"`
	Reason     string        `json:"decision_reason,omitempty"`
	RunBy      string        `json:"run_by,omitempty"`
	Result     string        `json:"result,omitempty"`
}

// proposalJSON describes s at now; approvers are who may approve it.
func proposalJSON(s approval.State, now time.Time, approvers []string) ProposalJSON {
	p := s.Proposal
	out := ProposalJSON{
		Proposal: p.ID, Action: p.Action, Count: len(p.MessageIDs), Vhost: p.Vhost, Queue: p.Queue,
		MessageIDs: p.MessageIDs, Plan: p.Plan, Teams: p.Teams, Approvers: approvers, Proposer: p.Proposer,
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
	ids := make([]string, len(chosen))
	for i, t := range chosen {
		ids[i] = t.ID
	}
	teams := a.owners.Teams(queue, chosen)
	if len(teams) == 0 {
		teams = nil
	}
	// The proposer is whoever signs: sign a draft to learn who, then the
	// proposal naming them.
	draft := approval.New(action, a.vhost, queue, ids, plan, teams, "", time.Now(), a.expireAfter)
	who, _, _, err := a.signature(us, draft.Hash(), "")
	if err != nil {
		return err
	}
	if !who.Role.MayAct() {
		return fmt.Errorf("%s is a viewer: a viewer may not propose a %s", who.Name, action)
	}
	p := approval.New(action, a.vhost, queue, ids, plan, teams, who.Name, time.Now(), a.expireAfter)
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
	return proposalMade{id: p.ID, action: action, count: len(ids)}
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
