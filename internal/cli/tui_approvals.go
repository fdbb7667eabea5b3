package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"

	"github.com/spf13/cobra"

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
			return approval.States(j)
		},
		Run: a.runFromTUI,
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
