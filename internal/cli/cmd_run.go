package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/access"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

func (a *app) runCommand() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "run ID --yes",
		Short: "Carry out an approved proposal: exactly its messages, with its plan",
		Long: `run carries out proposal ID once it is approved: the discard or replay of
exactly the message ids it names, with the options it was proposed with. It
refuses a proposal that is pending, rejected, expired or already run, and one
whose approval no longer verifies (signature, approver, hash). A message
whose body is no longer the one the proposal names by SHA-256 (another
message parked under the same id) is left in the queue, and run says which.
The run is journaled once it reaches the broker: a run that never got there
leaves the proposal approved. The proposer
or any operator of the users file may run it (--key, or --actor naming them).
Without --yes it only says what it would do.`,
		Args: exactArgs(1, "one proposal ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runProposal(cmd, args[0], yes)
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "do it; without --yes only the proposal is shown")
	return cmd
}

func (a *app) runProposal(cmd *cobra.Command, id string, yes bool) error {
	us, err := a.loadUsers()
	if err != nil {
		return err
	}
	j, err := a.openJournal()
	if err != nil {
		return err
	}
	s, err := a.findProposal(j, id)
	if err != nil {
		return err
	}
	if err := a.sessionActsIn("proposal "+id, s.Proposal.Vhost); err != nil {
		return err
	}
	who, err := a.runner(us, s.Proposal.Hash())
	if err != nil {
		return err
	}
	if err := approval.CanRun(s, person(who), time.Now()); err != nil {
		return err
	}
	if s.Proposal.Action == approval.GateReveal {
		return usageError{fmt.Errorf("proposal %s is a reveal: %s uses it with v on the message in the TUI, once", id, s.Proposal.Proposer)}
	}
	d, _ := s.Approval()
	keys, err := a.decisionKeys(us)
	if err != nil {
		return err
	}
	if err := approvalHolds(d, keys); err != nil {
		return fmt.Errorf("proposal %s: the approval by %s does not hold against %s (%v): not run", id, d.By, us.Path, err)
	}
	if err := approverNow(d, s.Proposal, us); err != nil {
		return fmt.Errorf("proposal %s: %w: not run", id, err)
	}
	out := cmd.OutOrStdout()
	printProposal(out, s, time.Now(), nil)
	if !yes {
		fmt.Fprintf(out, "approved by %s; nothing changed: dlqt run %s --yes carries it out\n", d.By, id)
		return nil
	}
	rec := journal.NewRecorder(j, who.Name, a.host)
	p := s.Proposal
	base := triage.Record{Action: triage.ActionProposalRun, Vhost: p.Vhost, Queue: p.Queue, MessageIDs: p.MessageIDs}
	start := base
	start.Details = map[string]any{"proposal_id": id, "approved_by": d.By, "hash": p.Hash()}
	// The run is journaled when it acts: a broker that does not answer
	// leaves the approval unspent.
	acted := false
	a.beforeChange = func() error { acted = true; return rec.Record(start) }
	a.vhost, a.actor = p.Vhost, who.Name
	runErr := a.carryOut(cmd, p, d)
	a.beforeChange = nil
	if !acted {
		if runErr == nil {
			runErr = errors.New("it reached no queue")
		}
		return fmt.Errorf("proposal %s did not run, nothing was changed and it stays approved: %w", id, runErr)
	}
	end := base
	end.Reason = "finished"
	if runErr != nil {
		end.Reason = "failed: " + runErr.Error()
	}
	end.Details = map[string]any{"proposal_id": id, "result": end.Reason}
	if err := rec.Record(end); err != nil {
		return errors.Join(runErr, err)
	}
	return runErr
}

// approvalHolds checks an approval against the users file as it is now: a
// signature of that approval by a key of the approver, or, given in a dlqt
// serve session, by the server's key for a session key of theirs.
func approvalHolds(d approval.Decision, keys approval.Keys) error {
	return keys.CheckDecision(d, d.Hash)
}

// runner is who runs a proposal: the owner of --key when one is given,
// else the user --actor names.
func (a *app) runner(us *access.Users, hash string) (*access.User, error) {
	if a.keyFile != "" || a.session != nil {
		u, _, _, err := a.signature(us, hash, "")
		return u, err
	}
	if u, ok := us.ByName(a.actor); ok {
		return u, nil
	}
	return nil, usageError{fmt.Errorf("%q is not in %s: run as one of its users (--key FILE, or --actor NAME)", a.actor, us.Path)}
}

// carryOut does what p says, as approved by d.
func (a *app) carryOut(cmd *cobra.Command, p approval.Proposal, d approval.Decision) error {
	sel := triage.Selection{IDs: p.MessageIDs}
	switch p.Action {
	case approval.GateDiscard:
		req := triage.DiscardRequest{Vhost: p.Vhost, Queue: p.Queue, Selection: sel, Browse: a.browseOptions(), Bodies: p.Bodies(),
			Reason: fmt.Sprintf("%s (proposal %s by %s, approved by %s)", p.Plan.Reason, p.ID, p.Proposer, d.By)}
		return a.discard(cmd.Context(), cmd.OutOrStdout(), req)
	case approval.GateReplay:
		f, err := replayFlagsOf(p)
		if err != nil {
			return err
		}
		return a.replay(cmd, p.Queue, f)
	case approval.GateEdit: // the approval is what counts: a replay publishes the revision
		if err := a.changing(); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "revision %s is approved: dlqt replay %s --id %s publishes it\n", p.Plan.Revision, p.Queue, strings.Join(p.MessageIDs, " --id "))
		return nil
	}
	return fmt.Errorf("proposal %s: dlqt cannot run a %q", p.ID, p.Action)
}

// replayFlagsOf are the replay options a proposal was made with.
func replayFlagsOf(p approval.Proposal) (replayFlags, error) {
	f := replayFlags{ids: p.MessageIDs, bodies: p.Bodies(), to: p.Plan.To, rate: p.Plan.Rate, canary: p.Plan.Canary, canaryRate: p.Plan.CanaryRate,
		maxBacklog: p.Plan.MaxBacklog, orderBy: p.Plan.OrderBy, inOrder: p.Plan.InOrder, yes: true, approved: true}
	if f.canaryRate == 0 {
		f.canaryRate = replay.DefaultCanaryRate
	}
	for _, d := range []struct {
		name, text string
		to         *time.Duration
	}{{"observe", p.Plan.Observe, &f.observe}, {"baseline", p.Plan.Baseline, &f.baseline}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil {
			return f, fmt.Errorf("proposal %s: %s %q: %w", p.ID, d.name, d.text, err)
		}
		*d.to = v
	}
	return f, nil
}
