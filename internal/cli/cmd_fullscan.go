package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
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
			rows := groupRows(args[0], s.Groups, a.owners, a.redactor())
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
// window of messages and the groups, however long the queue. The ids of
// each window are journaled before its copies are published, so the next
// scan removes exactly the extra copies an interrupted one left.
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
	if err := a.refuseWithoutPermission(ctx, live, top, "fullscan", broker.FeatureFullScan); err != nil {
		return triage.Streamed{}, err
	}
	interrupted, err := a.interruptedScans(top.Vhost, queue)
	if err != nil {
		return triage.Streamed{}, err
	}
	scanID := broker.NewScanID()
	record := func(ids []string, details map[string]any) error {
		details["scan"] = scanID
		return rec.Record(triage.Record{Action: triage.ActionFullScan, Vhost: top.Vhost, Queue: queue, MessageIDs: ids, Details: details})
	}
	decision := map[string]any{"step": "decision", "window": window, "effects": broker.FullScanEffects}
	if len(interrupted) > 0 {
		decision["interrupted"] = scanIDs(interrupted)
	}
	if err := record(nil, decision); err != nil {
		return triage.Streamed{}, err
	}
	scan := &fullScanReader{live: live, top: top, opts: broker.FullScanOptions{
		ScanID: scanID, Window: window, Interrupted: interrupted, Progress: progressTo(a.stderr, "moving "+queue),
		InFlight: func(w broker.ScanWindow) error {
			details := map[string]any{"step": "in-flight", "contents": w.Contents}
			if len(w.Removing) > 0 {
				details["removing"] = w.Removing
			}
			return record(w.Moving, details)
		},
	}}
	s, scanErr := triage.InspectEach(ctx, scan, queue, triage.BrowseOptions{}, triage.StreamOptions{
		Redactor: a.redactor(),
		Each:     func(*triage.Triaged) (bool, error) { return true, nil },
	})
	res := scan.res
	outcome := map[string]any{"step": "outcome", "total": res.Total, "moved": res.Moved, "removed": res.Removed, "final": res.Final, "whole": res.Whole()}
	if scanErr != nil {
		outcome["error"] = scanErr.Error()
	}
	if err := errors.Join(scanErr, record(nil, outcome)); err != nil {
		return triage.Streamed{}, err
	}
	reportMoved(a.stderr, queue, res)
	return s, nil
}

// interruptedScans are the full scans of queue since the last one that
// read to its end, newest first, with the ids of every window they
// journaled: what an extra copy can be a copy of. A scan that read to its
// end saw every copy the scans before it left; its own windows count
// unless it ended whole (an ack the broker lost leaves a pair too).
func (a *app) interruptedScans(vhost, queue string) ([]broker.InterruptedScan, error) {
	j, err := a.openJournal()
	if err != nil {
		return nil, err
	}
	history, err := j.QueueHistory(vhost, queue, 0)
	if err != nil {
		return nil, err
	}
	var scans []broker.InterruptedScan
	at := map[string]int{}
	last := "" // the newest scan that read to its end
	for _, e := range history {
		id, _ := e.Details["scan"].(string)
		if e.Action != triage.ActionFullScan || id == "" {
			continue
		}
		if _, failed := e.Details["error"]; e.Details["step"] == "outcome" && !failed {
			if e.Details["whole"] == true {
				break
			}
			last = id
		}
		if e.Details["step"] == "decision" && id == last {
			break
		}
		i, ok := at[id]
		if !ok {
			i, at[id] = len(scans), len(scans)
			scans = append(scans, broker.InterruptedScan{ScanID: id})
		}
		if contents := detailStrings(e.Details["contents"]); e.Details["step"] == "in-flight" && len(contents) == len(e.MessageIDs) {
			scans[i].IDs = append(scans[i].IDs, e.MessageIDs...)
			scans[i].Contents = append(scans[i].Contents, contents...)
		}
	}
	return slices.DeleteFunc(scans, func(s broker.InterruptedScan) bool { return len(s.IDs) == 0 }), nil
}

// detailStrings is a journal detail's list of strings (JSON gives []any back).
func detailStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func scanIDs(scans []broker.InterruptedScan) []string {
	ids := make([]string, len(scans))
	for i, s := range scans {
		ids[i] = s.ScanID
	}
	return ids
}

// fullScanReader is the triage.Reader of a full scan: its Browse moves the
// whole queue through its tail (broker.FullScan), handing each original
// on, in queue order, before its copy is published.
type fullScanReader struct {
	live *broker.Live
	top  triage.Topology
	opts broker.FullScanOptions
	res  broker.FullScanResult
}

func (r *fullScanReader) Describe() string { return r.live.Describe() }

func (r *fullScanReader) Topology(context.Context) (triage.Topology, error) { return r.top, nil }

func (r *fullScanReader) Browse(ctx context.Context, queue string, opts triage.BrowseOptions) (triage.Batch, error) {
	b := triage.Batch{Vhost: r.top.Vhost, Queue: queue, TakenAt: time.Now().UTC()}
	var err error
	scan := r.opts
	scan.Visit = func(m triage.Message) error {
		b.Read++
		return opts.Each(m)
	}
	r.res, err = r.live.FullScan(ctx, queue, scan)
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

// reportMoved says "moved all" only when the queue then held exactly the
// messages the scan moved.
func reportMoved(w io.Writer, queue string, res broker.FullScanResult) {
	if res.Removed > 0 {
		fmt.Fprintf(w, "dlqt: removed %d extra copies an interrupted full scan of %s had left (each after the copy of its original was confirmed)\n", res.Removed, queue)
	}
	if res.Whole() {
		fmt.Fprintf(w, "dlqt: moved all %d messages of %s to its tail, each confirmed before its original was acked\n", res.Moved, queue)
		return
	}
	if res.Final < 0 {
		fmt.Fprintf(w, "dlqt: moved %d messages of %s to its tail; how many it holds now could not be read\n", res.Moved, queue)
		return
	}
	fmt.Fprintf(w, "dlqt: moved %d messages of %s to its tail; it now holds %d, not %d: dead letters that arrived during the scan, or copies twice (the next dlqt fullscan removes its own extra copies)\n",
		res.Moved, queue, res.Final, res.Moved)
}
