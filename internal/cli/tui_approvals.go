package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/access"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/ui"
)

// tuiApprovals is the TUI's side of the approval workflow, on the same
// code as propose, proposals and run; nil when the config gates nothing.
func (a *app) tuiApprovals() *ui.Approvals {
	if len(a.policy) == 0 {
		return nil
	}
	return &ui.Approvals{
		Needs: a.gated,
		Propose: func(_ context.Context, action, queue string, msgs []triage.Triaged, plan approval.Plan) (string, error) {
			err := a.propose(io.Discard, action, queue, msgs, plan, false)
			var pm proposalMade
			if errors.As(err, &pm) {
				return pm.id, nil
			}
			if err == nil {
				err = errors.New("no proposal was made")
			}
			return "", err
		},
		Proposals: func() ([]approval.State, error) {
			j, err := a.openJournal()
			if err != nil {
				return nil, err
			}
			return a.proposalStates(j)
		},
		Approvers: func(teams []string, proposer string) []string {
			us, _ := a.optionalUsers()
			return approverNames(us, teams, proposer)
		},
		Run:    a.runFromTUI,
		Reveal: a.revealFromTUI,
	}
}

// runFromTUI runs proposal id as `dlqt run ID --yes` does, on a copy of
// the app (a run switches to the proposal's vhost), and returns its last
// line of output.
func (a *app) runFromTUI(ctx context.Context, id string) (string, error) {
	sa := *a
	var out bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetContext(ctx)
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	sa.stderr = io.Discard
	err := sa.runProposal(cmd, id, true)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[len(lines)-1], err
}

// tuiRevise is the TUI's edit in $EDITOR: only on a live broker with
// actions, and never in a dlqt serve session, where the editor would run
// on the server.
func (a *app) tuiRevise(live bool) func(context.Context, string, triage.Triaged, []byte, string) (string, error) {
	if !live || a.session != nil {
		return nil
	}
	return a.reviseFromTUI
}

// reviseFromTUI journals the TUI's $EDITOR edit of msg as a revision, or
// as its proposal when the policy gates edits, as dlqt edit does.
func (a *app) reviseFromTUI(_ context.Context, queue string, msg triage.Triaged, body []byte, reason string) (string, error) {
	changes := approval.Diff(msg.Message.Body, body)
	rev := approval.NewRevision(a.vhost, queue, msg, body, changes, a.redactor(), a.actor, reason, time.Now())
	if a.gated(approval.GateEdit, 1) {
		err := a.proposeEdit(io.Discard, rev, msg, approval.Plan{Reason: reason, Selection: "revision " + rev.ID}, false)
		var pm proposalMade
		if errors.As(err, &pm) {
			return fmt.Sprintf("revision %s needs a second person: proposal %s journaled (dlqt approve %s); the original is untouched", rev.ID, pm.id, pm.id), nil
		}
		return "", err
	}
	if err := a.recordRevision(rev, a.actor); err != nil {
		return "", err
	}
	return fmt.Sprintf("revision %s of %s journaled (%d field(s) changed); the original is untouched, a replay publishes the revision", rev.ID, msg.ID, len(changes)), nil
}

// revealFromTUI lets a gated reveal go ahead once: it finds this user's
// approved reveal proposal of msg and journals its run, or names the one
// still pending, or proposes one.
func (a *app) revealFromTUI(_ context.Context, queue string, msg triage.Triaged) (string, bool, error) {
	us, err := a.loadUsers()
	if err != nil {
		return "", false, err
	}
	me, _, _, err := a.signature(us, approval.SHA256([]byte(queue+"\x00"+msg.ID)), "")
	if err != nil {
		return "", false, err
	}
	j, err := a.openJournal()
	if err != nil {
		return "", false, err
	}
	states, err := a.proposalStates(j)
	if err != nil {
		return "", false, err
	}
	now := time.Now()
	for _, s := range slices.Backward(states) {
		p := s.Proposal
		if p.Action != approval.GateReveal || p.Vhost != a.vhost || p.Queue != queue || !slices.Equal(p.MessageIDs, []string{msg.ID}) || p.Proposer != me.Name {
			continue
		}
		switch s.Status(now) {
		case approval.StatusPending:
			return p.ID, false, nil
		case approval.StatusApproved:
			return p.ID, true, a.useReveal(j, s, me, us)
		}
	}
	err = a.propose(io.Discard, approval.GateReveal, queue, []triage.Triaged{msg}, approval.Plan{Reason: "reveal the unredacted payload"}, false)
	var pm proposalMade
	if errors.As(err, &pm) {
		return pm.id, false, nil
	}
	return "", false, err
}

// useReveal checks an approved reveal as run does and journals its run:
// one approval, one reveal.
func (a *app) useReveal(j *sessionJournal, s approval.State, me *access.User, us *access.Users) error {
	if err := approval.CanRun(s, person(me), time.Now()); err != nil {
		return err
	}
	d, _ := s.Approval()
	keys, err := a.decisionKeys(us)
	if err != nil {
		return err
	}
	if err := approvalHolds(d, keys); err != nil {
		return fmt.Errorf("the approval by %s does not hold: %w", d.By, err)
	}
	p := s.Proposal
	return journal.NewRecorder(j, me.Name, a.host).Record(triage.Record{
		Action: triage.ActionProposalRun, Vhost: p.Vhost, Queue: p.Queue, MessageIDs: p.MessageIDs, Reason: "reveal",
		Details: map[string]any{"proposal_id": p.ID, "approved_by": d.By, "hash": p.Hash(), "result": "revealed"},
	})
}
