package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/spill"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/ui"
	"github.com/dlqt/dlqt/internal/views"
)

// The headless commands call the same triage use cases as the TUI and print
// JSON for scripts (--json) or a plain table for people.

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("expected %s, got %d argument(s)", what, len(args))}
		}
		return nil
	}
}

func (a *app) queuesCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "queues",
		Short: "List the queues of the vhost; parking queues are marked",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, done, err := a.openReader(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			parking, top, err := triage.ListParking(cmd.Context(), r, a.patterns)
			if err != nil {
				return err
			}
			rows := queueRows(top, parking)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rows)
			}
			return printQueues(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func (a *app) groupsCommand() *cobra.Command {
	var asJSON bool
	var where []string
	cmd := &cobra.Command{
		Use:   "groups QUEUE [--where EXPR ...]",
		Short: "Group a queue's messages by reason and reason_code",
		Args:  exactArgs(1, "one QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.streamGroups(cmd.Context(), cmd.OutOrStdout(), args[0], where, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	whereFlag(cmd, &where)
	return cmd
}

func (a *app) messagesCommand() *cobra.Command {
	var asJSON bool
	var where []string
	cmd := &cobra.Command{
		Use:   "messages QUEUE [--where EXPR ...]",
		Short: "Print a queue's messages, decoded and redacted",
		Args:  exactArgs(1, "one QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if live := a.snapshotPath == "" && !a.demo; live && asJSON {
				return a.streamMessages(cmd.Context(), cmd.OutOrStdout(), args[0], where)
			} else if live {
				return a.streamMessageTable(cmd.Context(), cmd.OutOrStdout(), args[0], where)
			}
			in, f, err := a.inspectWhere(cmd.Context(), args[0], where)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			discarded := a.discardedIn(in)
			if !asJSON {
				return printMessages(out, in, f, a.redactor())
			}
			if err := writeMessageLines(out, in.Messages, a.redactor(), discarded); err != nil || in.Batch.Unreadable == nil {
				return err
			}
			return json.NewEncoder(out).Encode(unreadableRow(in.Batch.Unreadable))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per line")
	whereFlag(cmd, &where)
	return cmd
}

// whereHelp is the --where grammar, shared by every command that takes it.
const whereHelp = `only messages where FIELD OP VALUE holds (repeat: all must hold).
Fields: reason, reason_code, event_type, trace_id, queue (died in), died, first_died,
schema_version, consumer_version, tenant (at filters.tenant_path; without one,
the first of tenant, tenant_id, tenantId, customer_id, account_id, org_id in
the envelope, its data/payload object or the headers, named on stderr), text
(redacted headers and payload). OP: = or != (VALUE may list a,b,c), ~ or !~ (substring,
any case), > < >= <= for died (a time or an age: died<1h) and schema_version`

func whereFlag(cmd *cobra.Command, where *[]string) {
	cmd.Flags().StringArrayVar(where, "where", nil, whereHelp)
}

// inspectWhere parses --where first (a typo fails before the broker is
// touched), browses the queue and keeps what the filter matches.
func (a *app) inspectWhere(ctx context.Context, queue string, where []string) (triage.Inspection, filter.Filter, error) {
	f, err := a.parseWhere(where)
	if err != nil {
		return triage.Inspection{}, f, err
	}
	in, err := a.inspect(ctx, queue)
	if err != nil {
		return in, f, err
	}
	in = f.Narrow(in)
	a.noteTenant(f)
	return in, f, nil
}

// noteTenant says on stderr which key tenant= read, when it detected one
// (no filters.tenant_path): a script's author must know what matched.
func (a *app) noteTenant(m triage.Matcher) {
	if f, ok := m.(*filter.Filter); ok {
		m = *f
	}
	if f, ok := m.(filter.Filter); ok {
		if note := f.TenantNote(); note != "" {
			fmt.Fprintln(a.stderr, "dlqt: note:", note)
		}
	}
}

func (a *app) snapshotCommand() *cobra.Command {
	var out string
	var allParking, raw, yes bool
	cmd := &cobra.Command{
		Use:   "snapshot [QUEUE...] --out FILE [--raw [--yes]]",
		Short: "Save queues' messages and the topology to a file, for offline triage",
		Long: `snapshot browses each QUEUE (or every parking queue with --all-parking) and
writes the messages and the topology needed to classify them to FILE,
gzip-compressed, each queue as it is read. Open it later with
dlqt --snapshot FILE, with no broker at all (older uncompressed snapshots
open too).

Bodies and headers are written redacted with the active rules (the defaults
plus the config's redaction section), as the screen shows them: a file to
hand to a teammate. A message without a message_id then gets another id
than on the broker (its id hashes the body).

--raw writes them as they are, secrets included: dlqt asks first on a
terminal (without one, --yes is the consent), says so on stderr and records
in the journal who wrote which queues to which file, with its SHA-256.
Treat a raw file like the queue itself.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError{fmt.Errorf("--out FILE is required")}
			}
			if len(args) == 0 && !allParking {
				return usageError{fmt.Errorf("name at least one QUEUE, or pass --all-parking")}
			}
			req := snapshotRequest{out: out, raw: raw, yes: yes}
			if err := consentRaw(req, os.Stdin, cmd.ErrOrStderr()); err != nil {
				return err
			}
			ctx := cmd.Context()
			r, done, err := a.openReader(ctx)
			if err != nil {
				return err
			}
			defer done()
			queues := args
			if allParking {
				parking, _, err := triage.ListParking(ctx, r, a.patterns)
				if err != nil {
					return err
				}
				for _, p := range parking {
					queues = append(queues, p.Name)
				}
			}
			req.queues = queues
			return a.writeSnapshot(ctx, r, req, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "file to write, gzip-compressed whatever its name (zcat reads it; name it .json.gz)")
	cmd.Flags().BoolVar(&allParking, "all-parking", false, "snapshot every parking queue of the vhost")
	cmd.Flags().BoolVar(&raw, "raw", false, "write bodies and headers unredacted (asks; journalled)")
	cmd.Flags().BoolVar(&yes, "yes", false, "with --raw: consent without being asked")
	return cmd
}

// inspect browses one queue with progress on stderr and fails loudly on a
// partial read, since a script cannot see a status line.
func (a *app) inspect(ctx context.Context, queue string) (triage.Inspection, error) {
	r, done, err := a.openReader(ctx)
	if err != nil {
		return triage.Inspection{}, err
	}
	defer done()
	opts := a.browseOptions()
	opts.Progress = progressTo(a.stderr, "reading "+queue)
	opts.Returning = returningTo(a.stderr, queue)
	in, err := triage.Inspect(ctx, r, queue, opts, a.redactor())
	if err != nil {
		if dc, ok := err.(*triage.DeliveryCostError); ok {
			return in, fmt.Errorf("%v; pass --accept-delivery-cost to browse anyway", dc)
		}
		return in, err
	}
	if in.Batch.Unreadable != nil { // see cmd_quarantine.go
		fmt.Fprintf(a.stderr, "dlqt: %s\n", unreadableNotice(in.Batch))
	} else {
		noteBound(a.stderr, in.Batch)
	}
	return in, nil
}

// inspectIndexed is inspect for an action's plan: without --limit it reads
// the whole queue (as far as the broker's memory headroom allows, and says
// so when that cuts it), and it keeps each message as a TUI browse does:
// whole on disk (spill.File, never mapped into memory), an index entry in
// memory (no body, headers, payload or timeline), read back where the plan
// needs more. A plan of 100,000 messages so costs their index, not their
// bodies twice over (830 MB of RSS before). Without a cache directory it
// keeps whole messages, as inspect does, and says so. done closes the
// file: call it once nothing reads the inspection's messages any more.
func (a *app) inspectIndexed(ctx context.Context, queue string) (in triage.Inspection, done func(), err error) {
	done = func() {}
	store, serr := spill.CreateFile("")
	if serr != nil {
		fmt.Fprintf(a.stderr, "dlqt: note: %v: the messages read for the plan stay in memory\n", serr)
	}
	r, closeReader, err := a.openReader(ctx)
	if err != nil {
		if store != nil {
			store.Close()
		}
		return in, done, err
	}
	defer closeReader()
	var index *triage.Spilled
	if store != nil {
		index = triage.NewSpilled(store, a.redactor())
		done = func() { store.Close() }
	}
	opts := a.browseOptions()
	if !a.limitSet {
		opts.Limit = 0 // the whole queue, bounded by the broker's safety
	}
	// The index is packed and bounded as the TUI's is (ui.DefaultIndexBudget,
	// or --memory-budget): over a million entries; a larger queue is read up
	// to there and the plan says so.
	budget := cmp.Or(a.indexBudget(), ui.DefaultIndexBudget)
	var spent int64
	var kept []triage.Triaged // without a store
	var packed *triage.Index
	var expected atomic.Int64
	progress := progressTo(a.stderr, "reading "+queue)
	opts.Progress = func(read, want int) {
		expected.Store(int64(want))
		if progress != nil {
			progress(read, want)
		}
	}
	opts.Returning = returningTo(a.stderr, queue)
	s, err := triage.InspectEach(ctx, r, queue, opts, triage.StreamOptions{Redactor: a.redactor(), Payloads: index == nil,
		Each: func(t *triage.Triaged) (bool, error) {
			if index == nil {
				if kept == nil { // room for the whole read at once: grown by append, 100,000 entries are copied a dozen times
					kept = make([]triage.Triaged, 0, min(max(expected.Load(), 1), budget/512+1))
				}
				t.Message.Position = len(kept)
				kept = append(kept, *t)
				return true, nil
			}
			if packed == nil {
				packed = triage.NewIndex(int(min(max(expected.Load(), 1), budget/64+1)))
			}
			t.Message.Position = packed.Len() // the order of the read: the store's key
			entry := index.Index(*t)
			if cost := packed.Append(&entry); spent+cost <= budget || spent == 0 {
				spent += cost
			} else {
				packed.Truncate(packed.Len() - 1)
				return false, errIndexBudget
			}
			if err := store.Put(t.Message); err != nil {
				packed.Truncate(packed.Len() - 1)
				return false, err
			}
			return true, nil
		}})
	read := len(kept)
	if index != nil {
		read = packed.Len()
	}
	if errors.Is(err, errIndexBudget) { // a bound, not a failure: say which
		err, s.Batch.Err, s.Batch.Read = nil, nil, read
		s.Batch.Bound = fmt.Sprintf("dlqt memory budget (%s of index; --memory-budget)", sizeText(budget))
	}
	if index != nil {
		index.UseTopology(s.Topology)
		if ferr := store.Flush(); ferr != nil && err == nil {
			err = ferr
		}
	}
	in = triage.Inspection{Batch: s.Batch, Topology: s.Topology, Messages: kept}
	if index != nil {
		in.Messages = nil
		if packed != nil {
			in.Entries = packed
		}
	}
	in.Groups = triage.GroupList(in.List())
	if err != nil {
		if dc, ok := err.(*triage.DeliveryCostError); ok {
			err = fmt.Errorf("%v; pass --accept-delivery-cost to browse anyway", dc)
		}
		return in, done, err
	}
	if in.Batch.Unreadable != nil { // see cmd_quarantine.go
		fmt.Fprintf(a.stderr, "dlqt: %s\n", unreadableNotice(in.Batch))
	} else {
		noteBound(a.stderr, in.Batch)
	}
	return in, done, nil
}

// sizeText is n bytes as --memory-budget writes it.
func sizeText(n int64) string {
	b := byteSize(n)
	return b.String()
}

var errIndexBudget = errors.New("the index's memory budget is spent")

// progressTo reports browse progress on w when w is a terminal.
func progressTo(w io.Writer, what string) func(read, expected int) {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return func(read, expected int) {
		fmt.Fprintf(w, "\r%s: %d / %d", what, read, expected)
		if read >= expected {
			fmt.Fprintln(w)
		}
	}
}

func printQueues(w io.Writer, rows []QueueRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tTYPE\tMESSAGES\tRATE/s\tPARKING\tRULE")
	for _, r := range rows {
		park := "-"
		if r.Parking {
			park = "parking"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%s\t%s\n", r.Name, r.Type, r.Messages, r.IngressRate, park, dash(r.Rule))
	}
	return tw.Flush()
}

// printGroups prints the groups as a table, with an OWNER column when the
// config has owners.
func printGroups(w io.Writer, b triage.Batch, matched int, f filter.Filter, rows []GroupRow, owners bool) error {
	fmt.Fprintf(w, "queue %s: %s%s\n", sanitize.Line(b.Queue), boundText(b), filterText(matched, f))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "REASON\tREASON_CODE\tCOUNT\tOLDEST\tNEWEST\tEVENT TYPES"
	if owners {
		head += "\tOWNER"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		line := fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s", r.Reason, dash(triage.FaultLabel(r.ReasonCode, r.ThrownAt)), r.Count, deref(r.Oldest), deref(r.Newest), strings.Join(r.EventTypes, ", "))
		if owners {
			line += "\t" + dash(r.Owner)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

func printMessages(w io.Writer, in triage.Inspection, f filter.Filter, red *redact.Redactor) error {
	lines := make([]messageLine, in.Len())
	for i := range lines {
		t := in.At(i)
		lines[i] = messageLineOf(&t, red)
	}
	return printMessageLines(w, in.Batch, f, lines)
}

// messageLine is what the messages table shows of a message: a streamed
// read keeps this much of each, not the message. Its reason code and event
// type are kept as shown (redacted, sanitised).
type messageLine struct {
	id, reason, reasonCode, eventType string
	attempts                          int
	died                              time.Time
}

func messageLineOf(t *triage.Triaged, red *redact.Redactor) messageLine {
	return messageLine{id: t.ID, reason: string(t.Reason), reasonCode: shownText(red, t.ReasonCode), eventType: shownText(red, t.Envelope.EventType),
		attempts: t.Attempts, died: t.DiedAt}
}

func printMessageLines(w io.Writer, b triage.Batch, f filter.Filter, lines []messageLine) error {
	fmt.Fprintf(w, "queue %s: %s%s\n", sanitize.Line(b.Queue), boundText(b), filterText(len(lines), f))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tREASON\tREASON_CODE\tEVENT TYPE\tATTEMPTS\tDIED AT")
	for _, l := range lines {
		died := "-"
		if !l.died.IsZero() {
			died = l.died.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", l.id, l.reason, dash(l.reasonCode), dash(l.eventType), l.attempts, died)
	}
	if u := b.Unreadable; u != nil {
		fmt.Fprintf(tw, "(position %d)\tunreadable\t-\t-\t-\t-\n", u.Position)
	}
	return tw.Flush()
}

// filterText says how many messages a filter kept, or nothing unfiltered.
func filterText(matched int, f filter.Filter) string {
	if f.Empty() {
		return ""
	}
	return fmt.Sprintf(", %d where %s", matched, f.String())
}

// boundText says how much of the queue a batch covers.
func boundText(b triage.Batch) string {
	if b.HeldElsewhere > 0 {
		return boundRead(b) + "; " + views.HeldElsewhere(b)
	}
	return boundRead(b)
}

// boundWhy is why a read stopped short of the queue: the broker's bound,
// else --limit.
func boundWhy(b triage.Batch) string {
	if b.Bound != "" {
		return sanitize.Line(b.Bound)
	}
	return "--limit"
}

func boundRead(b triage.Batch) string {
	if b.Truncated() && b.Bound != "" {
		return fmt.Sprintf("held %d of %d messages: %s", b.Count(), b.Depth, b.Bound)
	}
	if b.Truncated() {
		return fmt.Sprintf("first %d of %d messages", b.Count(), b.Depth)
	}
	return fmt.Sprintf("all %d messages", b.Count())
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
