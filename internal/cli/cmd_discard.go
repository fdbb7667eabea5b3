package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

func (a *app) discardCommand() *cobra.Command {
	var (
		ids    []string
		group  string
		reason string
		yes    bool
		asJSON bool
		where  []string
		retry  uint64
	)
	cmd := &cobra.Command{
		Use:   "discard QUEUE (--id ID ... | --group REASON[/CODE] | --where EXPR ...) --reason TEXT [--yes]",
		Short: "Take selected messages out of a parking queue for good, with a reason in the journal",
		Long: `discard removes messages from QUEUE in one pass: it holds the queue's messages
(as a browse does, up to --limit), acks exactly the selected ones and puts every
other message back in its place. Messages are matched by the id dlqt shows
(dlqt messages QUEUE). The decision and the outcome go to the journal.

Without --yes, discard only prints what it would do and changes nothing.
--group expired selects every code of that reason, --group rejected/CODE one
code, --group maxlen/ the messages without a code. A selected id that is no
longer in the queue is reported and makes the exit status non-zero.

--where narrows a group to the messages that match (--group expired --where
tenant=acme), or alone selects every message that matches. The plan and the
journal's decision name the filter. --where does not combine with --id: ids
already name the messages.

--retry SEQ discards again what the discard journaled as entry SEQ took,
with its reason, when a read finds those messages back in the queue (a
crash of the node before it wrote the acks down undoes them). The journal
names the retry and the entry it retries; messages of SEQ still gone are
reported, not an error.

--json prints the plan as one JSON object (action, vhost, queue, selection,
count, ids, missing, read, depth, truncated, problems, reason) for a script
to check before it runs the same command with --yes; it never discards.`,
		Args: exactArgs(1, "one QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var req triage.DiscardRequest
			var err error
			if retry != 0 {
				req, err = a.retryRequest(args[0], retry, len(ids) > 0 || group != "" || len(where) > 0 || reason != "")
			} else {
				req, err = a.discardRequest(args[0], ids, group, reason, where)
			}
			if err != nil {
				return err
			}
			_, gated := a.policy[approval.GateDiscard]
			if asJSON && yes && !gated {
				return usageError{errors.New("--json prints the plan only: check it, then run without --json and with --yes")}
			}
			if !yes {
				return a.printDiscardPlan(cmd.Context(), cmd.OutOrStdout(), req, asJSON)
			}
			if gated {
				return a.proposeDiscard(cmd.Context(), cmd.OutOrStdout(), req, asJSON)
			}
			return a.discard(cmd.Context(), cmd.OutOrStdout(), req)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&ids, "id", nil, "id of a message to discard, as dlqt shows it (repeat for more)")
	f.StringVar(&group, "group", "", "discard a whole group: REASON or REASON/CODE (REASON/ for no code)")
	f.StringVar(&reason, "reason", "", "why these messages are dropped, for the journal (required)")
	f.BoolVar(&yes, "yes", false, "do it; without --yes only the plan is printed")
	f.BoolVar(&asJSON, "json", false, "print the plan as JSON and change nothing")
	f.Uint64Var(&retry, "retry", 0, "discard again, with its reason, the messages of discard outcome `SEQ` (a journal entry) that are back")
	whereFlag(cmd, &where)
	return cmd
}

// discardRequest checks the command line: a reason, and ids, a group or a
// filter (which may narrow the group).
func (a *app) discardRequest(queue string, ids []string, group, reason string, where []string) (triage.DiscardRequest, error) {
	req := triage.DiscardRequest{Vhost: a.vhost, Queue: queue, Reason: strings.TrimSpace(reason), Browse: a.browseOptions()}
	if req.Reason == "" {
		return req, usageError{errors.New("--reason TEXT is required: the journal keeps why messages were discarded")}
	}
	sel, err := a.selection(ids, group, where)
	if err != nil {
		return req, err
	}
	req.Selection = sel
	return req, nil
}

// retryRequest is the discard whose outcome is journal entry seq, again:
// its reason, and the ids it took (those back in the queue are taken).
func (a *app) retryRequest(queue string, seq uint64, selected bool) (triage.DiscardRequest, error) {
	if selected {
		return triage.DiscardRequest{}, usageError{errors.New("--retry takes the ids and the reason from the journal entry: no --id, --group, --where or --reason")}
	}
	j, err := a.openJournal()
	if err != nil {
		return triage.DiscardRequest{}, err
	}
	defer j.Close()
	e, err := j.DiscardOutcome(seq, a.vhost, queue)
	if err != nil {
		return triage.DiscardRequest{}, usageError{err}
	}
	if len(e.MessageIDs) == 0 {
		return triage.DiscardRequest{}, usageError{fmt.Errorf("journal entry %d discarded nothing: there is nothing to retry", seq)}
	}
	return triage.DiscardRequest{Vhost: a.vhost, Queue: queue, Reason: e.Reason, Browse: a.browseOptions(),
		Selection: triage.Selection{IDs: e.MessageIDs}, RetryOf: seq}, nil
}

// printDiscardPlan browses the queue and shows what --yes would discard.
func (a *app) printDiscardPlan(ctx context.Context, w io.Writer, req triage.DiscardRequest, asJSON bool) error {
	in, done, err := a.inspectIndexed(ctx, req.Queue)
	defer done()
	if err != nil {
		return err
	}
	chosen := req.Selection.Of(in.List())
	a.noteTenant(req.Selection.Where)
	if asJSON {
		return writeJSON(w, discardPlanJSON(req, in, chosen))
	}
	fmt.Fprintf(w, "plan: discard %d message(s) from %s (%s)\n", len(chosen), sanitize.Line(req.Queue), boundText(in.Batch))
	fmt.Fprintf(w, "selection: %s\n", sanitize.Line(req.Selection.String()))
	fmt.Fprintf(w, "reason: %s\n", sanitize.Line(req.Reason))
	for _, t := range chosen {
		fmt.Fprintf(w, "  %s  %s/%s\n", t.ID, t.Reason, shownText(a.redactor(), t.ReasonCode))
	}
	if missing := missingIDs(req.Selection.IDs, chosen); req.RetryOf != 0 {
		fmt.Fprintf(w, "retry of journal entry #%d: %d of its %d message(s) are back, %d still gone\n", req.RetryOf, len(chosen), len(req.Selection.IDs), len(missing))
	} else if len(missing) > 0 {
		where := "not in the queue"
		if in.Batch.Truncated() {
			where = fmt.Sprintf("not among the first %d messages (%s)", in.Batch.Count(), boundWhy(in.Batch))
		}
		fmt.Fprintf(w, "%s: %s\n", where, strings.Join(sanitize.Lines(missing), ", "))
	}
	fmt.Fprintln(w, "nothing changed: run again with --yes to discard")
	return nil
}

// proposeDiscard reads the queue and, when the policy asks a second person
// for this many messages, proposes discarding exactly the chosen ones;
// otherwise it discards as asked.
func (a *app) proposeDiscard(ctx context.Context, w io.Writer, req triage.DiscardRequest, asJSON bool) error {
	in, done, err := a.inspectIndexed(ctx, req.Queue)
	defer done()
	if err != nil {
		return err
	}
	chosen := req.Selection.Of(in.List())
	if !a.gated(approval.GateDiscard, len(chosen)) {
		done() // the sweep reads the queue again
		if asJSON {
			return usageError{errors.New("--json prints the plan only: check it, then run without --json and with --yes")}
		}
		return a.discard(ctx, w, req)
	}
	plan := approval.Plan{Reason: req.Reason, Selection: req.Selection.String()}
	return a.propose(w, approval.GateDiscard, req.Queue, chosen, plan, asJSON)
}

// discard journals and carries out the request, then prints the result.
func (a *app) discard(ctx context.Context, w io.Writer, req triage.DiscardRequest) error {
	if a.demo || a.snapshotPath != "" {
		return usageError{errors.New("discard --yes changes the broker: a snapshot is read-only")}
	}
	rec, live, done, err := a.openForChange(ctx)
	if err != nil {
		return err
	}
	defer done()
	top, err := live.Topology(ctx)
	if err != nil {
		return err
	}
	if err := a.refuseWithoutPermission(ctx, live, top, "discard", broker.FeatureDiscard); err != nil {
		return err
	}
	if err := a.changing(); err != nil {
		return err
	}
	mem := a.limitDiscardMemory()
	defer mem.restore()
	req.Browse.Progress = progressTo(a.stderr, "holding "+req.Queue)
	req.Browse.Returning = returningTo(a.stderr, req.Queue)
	req.Browse.Limit = a.holdLimit() // without --limit the whole queue, as the plan read it
	res, err := triage.Discard(ctx, live, top, rec, req)
	if err != nil {
		var dc *triage.DeliveryCostError
		if errors.As(err, &dc) {
			return fmt.Errorf("%v; pass --accept-delivery-cost to discard anyway", dc)
		}
		if errors.Is(err, triage.ErrNoReason) {
			return usageError{err}
		}
		return err
	}
	fmt.Fprintf(w, "discarded %d message(s) from %s (held %d)\n", len(res.Discarded), sanitize.Line(req.Queue), res.Held)
	if res.Bound != "" {
		fmt.Fprintf(a.stderr, "dlqt: held %d messages of %s, not the whole queue: %s\n", res.Held, sanitize.Line(req.Queue), sanitize.Line(res.Bound))
	}
	for _, id := range res.Discarded {
		fmt.Fprintf(w, "  %s\n", id)
	}
	if len(res.Discarded) > 0 {
		fmt.Fprintf(w, "broker: %s\n", sanitize.Line(res.Verification))
	}
	if len(res.Changed) > 0 {
		return changedError(req.Queue, req.Bodies, res.Changed)
	}
	if len(res.StillThere) > 0 {
		return fmt.Errorf("%d acked message(s) are still in %s (the broker did not apply the acks): %s",
			len(res.StillThere), sanitize.Line(req.Queue), strings.Join(sanitize.Lines(res.StillThere), ", "))
	}
	if res.Bound != "" && len(req.Selection.IDs) == 0 { // ids missing past the bound are named below
		cut := partialRead{action: "discard", queue: req.Queue, read: res.Held, depth: max(res.Depth, res.Held), bound: res.Bound}
		fmt.Fprintln(w, "not read:", cut)
		return cut
	}
	if len(res.Missing) > 0 && req.RetryOf != 0 {
		fmt.Fprintf(w, "retry of journal entry #%d: %d of its message(s) still gone, nothing to do for them\n", req.RetryOf, len(res.Missing))
	} else if len(res.Missing) > 0 {
		where := "not in " + sanitize.Line(req.Queue)
		switch {
		case req.Browse.Limit > 0 && res.Held >= req.Browse.Limit:
			where = fmt.Sprintf("not among the first %d messages of %s (--limit)", res.Held, sanitize.Line(req.Queue))
		case res.Bound != "":
			where = fmt.Sprintf("not among the first %d messages of %s (%s)", res.Held, sanitize.Line(req.Queue), sanitize.Line(res.Bound))
		}
		return fmt.Errorf("%d selected message(s) %s, nothing done for them: %s",
			len(res.Missing), where, strings.Join(sanitize.Lines(res.Missing), ", "))
	}
	return nil
}

// changedError names the messages a decision was made on that now hold
// another body under the same id, and what each had then and has now.
func changedError(queue string, then, now map[string]string) error {
	lines := make([]string, 0, len(now))
	for _, id := range slices.Sorted(maps.Keys(now)) {
		lines = append(lines, fmt.Sprintf("%s (body sha256 %.12s then, %.12s now)", sanitize.Line(id), then[id], now[id]))
	}
	return fmt.Errorf("%d message(s) changed since the proposal named them, left in %s: %s; propose again for the new ones",
		len(now), sanitize.Line(queue), strings.Join(lines, ", "))
}

// missingIDs are the ids asked for that are not among the chosen messages.
func missingIDs(ids []string, chosen []triage.Triaged) []string {
	found := make(map[string]bool, len(chosen))
	for _, t := range chosen {
		found[t.ID] = true
	}
	var out []string
	for _, id := range ids {
		if !found[id] {
			found[id] = true // once each
			out = append(out, id)
		}
	}
	return out
}
