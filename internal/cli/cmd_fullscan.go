package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/filter"
)

func (a *app) fullScanCommand() *cobra.Command {
	var yes, asJSON bool
	var window int
	cmd := &cobra.Command{
		Use:   "fullscan QUEUE --yes [--json] [--window N]",
		Short: "Group the whole of a queue larger than a browse may hold, by moving each message to its tail",
		Long: `fullscan reads every message of QUEUE without holding them on the broker: a
window at a time, each message is republished to the tail of the same queue
(the broker confirms the copy) and only then its original is acked, and the
scan stops after the number of messages the queue held when it started. It
then prints the groups of the whole queue, as dlqt groups does.

It changes the queue, so it runs only with --yes; without it, dlqt says what
it would do and moves nothing. The journal records the decision before the
first message moves, and the outcome.`,
		Args: exactArgs(1, "one QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.fullScanNeedsABroker(); err != nil {
				return err // before the effects and "--yes runs it", which it never would
			}
			fmt.Fprintf(a.stderr, "dlqt: a full scan of %s:\n", args[0])
			for _, e := range broker.FullScanEffects {
				fmt.Fprintf(a.stderr, "  - %s\n", e)
			}
			if !yes {
				fmt.Fprintln(a.stderr, "dlqt: nothing moved; --yes runs it")
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), fullScanPlanJSON(a.vhost, args[0], window, broker.FullScanEffects))
				}
				return nil
			}
			s, err := a.fullScan(cmd.Context(), args[0], window)
			if err != nil {
				return err
			}
			rows := groupRows(args[0], s.Groups, a.owners)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rows)
			}
			return printGroups(cmd.OutOrStdout(), s.Batch, s.Matched, filter.Filter{}, rows, len(a.owners) > 0)
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "move the messages; without it nothing moves")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the groups as a JSON array; without --yes, the plan as a JSON object")
	cmd.Flags().IntVar(&window, "window", 256, "messages in flight at once")
	return cmd
}

// fullScan journals the decision, moves the whole queue through its tail
// and journals the outcome. Each message is triaged and counted into its
// group as it passes (triage.InspectEach), then dropped: memory stays a
// window of messages and the groups, however long the queue.
func (a *app) fullScan(ctx context.Context, queue string, window int) (triage.Streamed, error) {
	if err := a.fullScanNeedsABroker(); err != nil {
		return triage.Streamed{}, err
	}
	rec, live, done, err := a.openForChange(ctx)
	if err != nil {
		return triage.Streamed{}, err
	}
	defer done()
	top, err := live.Topology(ctx)
	if err != nil {
		return triage.Streamed{}, err
	}
	record := func(details map[string]any) error {
		return rec.Record(triage.Record{Action: triage.ActionFullScan, Vhost: top.Vhost, Queue: queue, Details: details})
	}
	if err := record(map[string]any{"step": "decision", "window": window, "effects": broker.FullScanEffects}); err != nil {
		return triage.Streamed{}, err
	}
	scan := &fullScanReader{live: live, top: top, window: window, progress: progressTo(a.stderr, "moving "+queue)}
	s, scanErr := triage.InspectEach(ctx, scan, queue, triage.BrowseOptions{}, triage.StreamOptions{
		Redactor: a.redactor(),
		Each:     func(*triage.Triaged) (bool, error) { return true, nil },
	})
	outcome := map[string]any{"step": "outcome", "total": scan.res.Total, "moved": scan.res.Moved}
	if scanErr != nil {
		outcome["error"] = scanErr.Error()
	}
	if err := errors.Join(scanErr, record(outcome)); err != nil {
		return triage.Streamed{}, err
	}
	reportMoved(a.stderr, queue, scan.res)
	return s, nil
}

// fullScanReader is the triage.Reader of a full scan: its Browse moves the
// whole queue through its tail (broker.FullScan), handing each original
// on, in queue order, before its copy is published.
type fullScanReader struct {
	live     *broker.Live
	top      triage.Topology
	window   int
	progress func(done, total int)
	res      broker.FullScanResult
}

func (r *fullScanReader) Describe() string { return r.live.Describe() }

func (r *fullScanReader) Topology(context.Context) (triage.Topology, error) { return r.top, nil }

func (r *fullScanReader) Browse(ctx context.Context, queue string, opts triage.BrowseOptions) (triage.Batch, error) {
	b := triage.Batch{Vhost: r.top.Vhost, Queue: queue, TakenAt: time.Now().UTC()}
	var err error
	r.res, err = r.live.FullScan(ctx, queue, broker.FullScanOptions{Window: r.window, Progress: r.progress,
		Visit: func(m triage.Message) error {
			b.Read++
			return opts.Each(m)
		},
	})
	b.Depth, b.Limit = r.res.Total, r.res.Total+1 // read to the end
	if err != nil {
		b.Err = err
	}
	return b, err
}

// fullScanNeedsABroker refuses a snapshot or the demo: there is nothing to
// move, and dlqt groups reads a snapshot whole.
func (a *app) fullScanNeedsABroker() error {
	if a.demo || a.snapshotPath != "" {
		return usageError{errors.New("fullscan moves messages on the broker: a snapshot is read whole by dlqt groups")}
	}
	return nil
}

func reportMoved(w io.Writer, queue string, res broker.FullScanResult) {
	fmt.Fprintf(w, "dlqt: moved all %d messages of %s to its tail, each confirmed before its original was acked\n", res.Moved, queue)
}
