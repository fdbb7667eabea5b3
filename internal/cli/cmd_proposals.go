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
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

func (a *app) proposalsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "proposals [ID] [--json]",
		Short: "List the proposals of the journal: actions that wait for, or got, a second person",
		Long: `proposals lists every proposal in the journal, oldest first, with its status
(pending, approved, rejected, expired, run), who proposed it, who decided, and
its hash: the SHA-256 an approval signs. With an ID, that proposal whole:
its message ids, its plan, who may approve it and its hash.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError{fmt.Errorf("expected at most one proposal ID, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			j, err := a.openJournal()
			if err != nil {
				return err
			}
			states, err := a.proposalStates(j)
			if err != nil {
				return err
			}
			us, _ := a.optionalUsers()
			now := time.Now()
			out := cmd.OutOrStdout()
			rows := make([]ProposalJSON, 0, len(states))
			for _, s := range states {
				if len(args) == 1 && s.Proposal.ID != args[0] {
					continue
				}
				rows = append(rows, proposalJSON(s, now, approverNames(us, s.Proposal.Teams, s.Proposal.Proposer)))
				if len(args) == 1 && !asJSON {
					printProposal(out, s, now, rows[0].Approvers)
					return nil
				}
			}
			if len(args) == 1 && len(rows) == 0 {
				return fmt.Errorf("proposal %q: %w in journal %s", args[0], approval.ErrUnknown, j.Path())
			}
			if asJSON {
				return writeJSON(out, rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(out, "no proposals")
			}
			for _, r := range rows {
				fmt.Fprintf(out, "%s  %-8s  %s %d of %s  by %s  expires %s%s\n", r.Proposal, r.Status, r.Action, r.Count,
					sanitize.Line(r.Queue), sanitize.Line(r.Proposer), r.ExpiresAt.Format(time.RFC3339), decidedText(r))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

// printPlanOf prints what a proposal's plan sets.
// optionalUsers is the users file when one is configured, nil otherwise.
func (a *app) optionalUsers() (*access.Users, error) {
	if a.session != nil && a.session.users != nil {
		return a.session.users(), nil
	}
	if a.usersFile == "" {
		return nil, nil
	}
	return access.Load(a.usersFile)
}

func decidedText(r ProposalJSON) string {
	switch {
	case r.RunBy != "":
		return fmt.Sprintf("  approved by %s, run by %s", sanitize.Line(r.ApprovedBy), sanitize.Line(r.RunBy))
	case r.ApprovedBy != "":
		return "  approved by " + sanitize.Line(r.ApprovedBy)
	case r.RejectedBy != "":
		return fmt.Sprintf("  rejected by %s: %s", sanitize.Line(r.RejectedBy), sanitize.Line(r.Reason))
	}
	return ""
}

func (a *app) approveCommand() *cobra.Command {
	var reason, sigFile string
	cmd := &cobra.Command{
		Use:   "approve ID [--reason TEXT] [--key FILE | --signature FILE]",
		Short: "Approve a proposal: signed with your SSH key, never your own, only for the teams you approve for",
		Long: `approve signs "approve HASH NAME" (the proposal's hash, the approver's name in
the users file) with --key, or takes --signature, made by
printf %s "approve HASH NAME" | ssh-keygen -Y sign -n dlqt-approval -f KEY,
and journals the approval under that name. A signature of the hash alone (as
dlqt took before) or of a rejection approves nothing. The approver must not
be the proposer, must be an operator, and must list every owning team of the
proposal under approves. dlqt run ID --yes then carries it out.`,
		Args: exactArgs(1, "one proposal ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.decide(cmd, args[0], true, reason, sigFile)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the journal")
	cmd.Flags().StringVar(&sigFile, "signature", "", `an ssh-keygen -Y sign -n dlqt-approval signature of "approve HASH NAME" (- for stdin)`)
	return cmd
}

func (a *app) rejectCommand() *cobra.Command {
	var reason, sigFile string
	cmd := &cobra.Command{
		Use:   "reject ID --reason TEXT [--key FILE | --signature FILE]",
		Short: "Reject a proposal, with a reason; it can never run",
		Args:  exactArgs(1, "one proposal ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(reason) == "" {
				return usageError{errors.New("--reason TEXT is required: the proposer reads why")}
			}
			return a.decide(cmd, args[0], false, reason, sigFile)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the proposer and the journal (required)")
	cmd.Flags().StringVar(&sigFile, "signature", "", `an ssh-keygen -Y sign -n dlqt-approval signature of "reject HASH NAME" (- for stdin)`)
	return cmd
}

// decide approves or rejects proposal id as the signer of its hash.
func (a *app) decide(cmd *cobra.Command, id string, approve bool, reason, sigFile string) error {
	us, err := a.loadUsers()
	if err != nil {
		return err
	}
	armored, err := readSignature(sigFile)
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
	hash := s.Proposal.Hash()
	who, sig, fp, err := a.decisionSignature(us, approve, hash, armored)
	if err != nil {
		return err
	}
	now := time.Now()
	if err := approval.CanDecide(s, person(who), now); err != nil {
		return err
	}
	action, word := triage.ActionProposalReject, "rejected"
	if approve {
		action, word = triage.ActionProposalApprove, "approved"
	}
	d := approval.Decision{Approve: approve, By: who.Name, At: now.UTC(), Reason: strings.TrimSpace(reason), Hash: hash, Signature: sig, Key: fp, Session: a.session != nil}
	err = journal.NewRecorder(j, who.Name, a.host).Record(triage.Record{
		Action: action, Vhost: s.Proposal.Vhost, Queue: s.Proposal.Queue, MessageIDs: s.Proposal.MessageIDs, Reason: d.Reason,
		Details: map[string]any{"proposal_id": id, "decision": d},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "proposal %s %s by %s (key %s)\n", id, word, who.Name, fp)
	if approve {
		fmt.Fprintf(cmd.OutOrStdout(), "run it before %s: dlqt run %s --yes\n", s.Proposal.ExpiresAt.Format(time.RFC3339), id)
	}
	return nil
}
