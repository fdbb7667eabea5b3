package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// replaySelecting carries out `replay --yes` as one read of queue, when the
// decision needs no message in advance (replay.Selectable): its hold
// selects as it reads, and the canary goes out as soon as its first
// messages are held. Planned first, a replay reads the whole queue, waits
// while the broker gives that read back, and reads it again to hold it.
// ran is false when the replay must be planned first: a destination
// allowed only as the messages' own route, a headers exchange, named ids,
// an order, edited or named bodies, a policy that asks for a proposal
// (which names each message it decides on), or a revision approved for a
// message of the queue.
func (a *app) replaySelecting(ctx context.Context, cmd *cobra.Command, queue string, sel triage.Selection, opts replay.Options, f replayFlags) (ran bool, err error) {
	if f.inOrder || len(f.bodies) > 0 {
		return false, nil
	}
	if _, gated := a.policy[approval.GateReplay]; gated {
		return false, nil
	}
	live, err := a.dial(ctx)
	if err != nil {
		return true, err
	}
	top, err := live.Topology(ctx)
	live.Close()
	if err != nil {
		return true, err
	}
	if replay.Selectable(sel, opts, top) != nil {
		return false, nil
	}
	vhost := cmp.Or(top.Vhost, a.vhost)
	if revised, err := a.revisedIn(vhost, queue); err != nil || revised {
		return err != nil, err
	}
	plan, err := replay.NewSelectingPlan(vhost, queue, sel, opts, top)
	if err != nil {
		return true, usageError{err}
	}
	a.noteTenant(sel.Where)
	out := cmd.OutOrStdout()
	printSelectingPlan(out, plan)
	if err := plan.Runnable(); err != nil {
		return true, err
	}
	if err := a.refuseReplayWithoutPermission(ctx, plan, false); err != nil {
		return true, err
	}
	if err := a.changing(); err != nil {
		return true, err
	}
	var cut error // the broker's headroom bounded the hold, as it bounds a plan's read (cutShort)
	res, err := a.replayHeld(ctx, cmd, plan, func(port *broker.Replay) {
		if read, depth, why := port.HoldBound(); why != "" {
			cut = partialRead{action: "replay " + plan.ID, queue: queue, read: read, depth: depth, bound: why}
		}
	})
	if err == nil && res.Items() == 0 && res.StoppedBecause == "" && !res.Aborted && cut == nil {
		return true, fmt.Errorf("replay %s: no message of %s matches %s: nothing was changed", plan.ID, sanitize.Line(queue), sanitize.Line(sel.String()))
	}
	if err := replayEnded(plan, res, err); err != nil || cut == nil {
		return true, err
	}
	fmt.Fprintln(out, "not read:", cut)
	return true, cut
}

// revisedIn says whether an approved revision names a message of queue:
// its replay must be planned, to publish the edited body for it.
func (a *app) revisedIn(vhost, queue string) (bool, error) {
	j, err := a.openJournal()
	if err != nil {
		return false, err
	}
	rs, err := j.RecordsOf(approval.RevisionRecord)
	if err != nil {
		return false, err
	}
	revs, err := approval.ApprovedRevisions(rs, vhost, queue)
	return len(revs) > 0, err
}

// printSelectingPlan is printPlan for a replay that selects as it holds:
// its messages are counted as they are held, so it says where they go.
func printSelectingPlan(w io.Writer, p replay.Plan) {
	fmt.Fprintf(w, "replay %s: the messages of %s (%s), vhost %s, selected as they are held: one read of the queue\n",
		sanitize.Line(p.ID), sanitize.Line(p.Queue), sanitize.Line(p.Selection.String()), sanitize.Line(p.Vhost))
	for _, d := range p.Destinations {
		queues := "no queue"
		if len(d.Queues) > 0 {
			queues = strings.Join(sanitize.Lines(d.Queues), ", ")
		}
		fmt.Fprintf(w, "  -> %s  allowed by replay.allow, reaches %s\n", sanitize.Line(d.Route.String()), queues)
	}
	printPlanEnd(w, p)
}
