package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// orderedAggregates splits the plan's messages by their aggregate at path
// and prints them; a message without one is refused, since its place in
// any order is unknown.
func orderedAggregates(w io.Writer, plan replay.Plan, in triage.Inspection, path string) ([]replay.Aggregate, error) {
	aggs, keyless := replay.Aggregates(planMessages(plan, in), path)
	if len(keyless) > 0 {
		return nil, fmt.Errorf("%d message(s) have no %s, so no place in an aggregate's order: %s", len(keyless), sanitize.Line(path), strings.Join(sanitize.Lines(keyless), ", "))
	}
	fmt.Fprintf(w, "  in order by %s: %d aggregate(s), one message of each at a time\n", sanitize.Line(path), len(aggs))
	for _, g := range aggs {
		fmt.Fprintf(w, "    %s: %s\n", sanitize.Line(g.Key), strings.Join(sanitize.Lines(g.IDs), " -> "))
	}
	return aggs, nil
}

// runInOrder replays the aggregates wave by wave, each wave a replay of
// its own (canary of all, observed), and says where each aggregate ended.
// It fails when an aggregate stopped.
func (a *app) runInOrder(ctx context.Context, cmd *cobra.Command, plan replay.Plan, aggs []replay.Aggregate) error {
	first := true
	wave := func(ctx context.Context, ids []string) (map[string]replay.Outcome, error) {
		sub := plan.Subset(ids, time.Now())
		if !first { // the destination's own dead-letter rate was counted before the first wave
			sub.Options.Baseline = 0
		}
		first = false
		res, err := a.replayOnce(ctx, cmd, sub)
		return res.Outcomes(), err
	}
	results, err := replay.RunInOrder(ctx, aggs, wave)
	out := cmd.OutOrStdout()
	stopped := 0
	for _, r := range results {
		if r.StoppedAt == "" {
			fmt.Fprintf(out, "aggregate %s: replayed in order: %s\n", sanitize.Line(r.Key), strings.Join(sanitize.Lines(r.Replayed), " -> "))
			continue
		}
		stopped++
		fmt.Fprintf(out, "aggregate %s: stopped at %s (%s) after %d; still parked: %s\n", sanitize.Line(r.Key), sanitize.Line(r.StoppedAt), r.Why,
			len(r.Replayed), dash(strings.Join(sanitize.Lines(r.Left), ", ")))
	}
	if err != nil {
		return err
	}
	if stopped > 0 {
		return fmt.Errorf("ordered replay: %d of %d aggregate(s) stopped; the others were replayed in order", stopped, len(results))
	}
	return nil
}
