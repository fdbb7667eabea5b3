package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// The headless groups and messages read a queue streamed
// (triage.InspectEach): each message is triaged as it arrives, counted into
// its group or written out, and dropped, so a queue of a million messages
// costs what a window of them does.

// streamRead says what a streamed read hands on, and how far it reads.
type streamRead struct {
	// each takes every message f matches (nil: the groups only); it must
	// not keep the message past the call.
	each func(t *triage.Triaged) error
	// payloads renders each message's redacted payload for each.
	payloads bool
	// first reads the first --limit messages (10,000 unset), as the
	// unstreamed commands do, not the whole queue.
	first bool
}

// inspectEach parses --where first (a typo fails before the broker is
// touched), then streams the queue through sr.each, counting what f
// matches into the groups.
func (a *app) inspectEach(ctx context.Context, queue string, f filter.Filter, sr streamRead) (triage.Streamed, error) {
	r, done, err := a.openReader(ctx)
	if err != nil {
		return triage.Streamed{}, err
	}
	defer done()
	opts := a.browseOptions()
	if !a.limitSet && !sr.first {
		opts.Limit = 0 // the whole queue, bounded by the broker's safety
	}
	opts.Progress = progressTo(a.stderr, "reading "+queue)
	opts.Returning = returningTo(a.stderr, queue)
	s, err := triage.InspectEach(ctx, r, queue, opts, triage.StreamOptions{
		Redactor: a.redactor(),
		Payloads: sr.payloads,
		Each: func(t *triage.Triaged) (bool, error) {
			if !f.Match(*t) {
				return false, nil
			}
			if sr.each != nil {
				return true, sr.each(t)
			}
			return true, nil
		},
	})
	if err != nil {
		if dc, ok := err.(*triage.DeliveryCostError); ok {
			return s, fmt.Errorf("%v; pass --accept-delivery-cost to browse anyway", dc)
		}
		return s, err
	}
	a.noteTenant(f)
	if s.Batch.Unreadable != nil { // see cmd_quarantine.go
		fmt.Fprintf(a.stderr, "dlqt: %s\n", unreadableNotice(s.Batch))
	} else {
		noteBound(a.stderr, s.Batch)
	}
	return s, nil
}

func (a *app) streamGroups(ctx context.Context, w io.Writer, queue string, where []string, asJSON bool) error {
	f, err := a.parseWhere(where)
	if err != nil {
		return err
	}
	s, err := a.inspectEach(ctx, queue, f, streamRead{})
	if err != nil {
		return err
	}
	rows := groupRows(queue, s.Groups, a.owners, a.redactor())
	if asJSON {
		return writeJSON(w, rows)
	}
	return printGroups(w, s.Batch, s.Matched, f, rows, len(a.owners) > 0)
}

// messageSink writes message rows as they are read, looking a chunk at a
// time up in the journal's discard index (discardedIn, as the unstreamed
// path does for the whole batch). A chunk ends at sinkChunk messages or
// sinkBytes of what its rows carry, whichever comes first: 4,096 rows of
// 1 MiB payloads were once kept before the first was written.
type messageSink struct {
	a     *app
	w     io.Writer
	batch triage.Batch
	top   triage.Topology
	chunk []triage.Triaged
	bytes int
}

const (
	sinkChunk = 4096
	sinkBytes = 1 << 20
)

func (s *messageSink) add(t *triage.Triaged) error {
	row := *t
	row.Message.Body = nil // a row carries the rendered payload, not the body
	s.chunk = append(s.chunk, row)
	s.bytes += len(row.Payload) + 1024
	if len(s.chunk) == sinkChunk || s.bytes >= sinkBytes {
		return s.flush()
	}
	return nil
}

func (s *messageSink) flush() error {
	in := triage.Inspection{Batch: s.batch, Topology: s.top, Messages: s.chunk}
	err := writeMessageLines(s.w, s.chunk, s.a.redactor(), s.a.discardedIn(in))
	clear(s.chunk) // let the payloads go
	s.chunk, s.bytes = s.chunk[:0], 0
	return err
}

func (a *app) streamMessages(ctx context.Context, w io.Writer, queue string, where []string) error {
	f, err := a.parseWhere(where)
	if err != nil {
		return err
	}
	sink := &messageSink{a: a, w: w, batch: triage.Batch{Vhost: a.vhost, Queue: queue}, top: triage.Topology{Vhost: a.vhost}}
	s, err := a.inspectEach(ctx, queue, f, streamRead{each: sink.add, payloads: true})
	if err != nil {
		return err
	}
	if err := sink.flush(); err != nil || s.Batch.Unreadable == nil {
		return err
	}
	return json.NewEncoder(w).Encode(unreadableRow(s.Batch.Unreadable))
}

// streamMessageTable prints the messages table of a live read streamed:
// each message leaves a line of the table (its id, reason, codes, time)
// and nothing else, so a read of large messages keeps to --memory-budget
// as messages --json does; it reads the first --limit messages, as before.
func (a *app) streamMessageTable(ctx context.Context, w io.Writer, queue string, where []string) error {
	f, err := a.parseWhere(where)
	if err != nil {
		return err
	}
	var lines []messageLine
	red := a.redactor()
	s, err := a.inspectEach(ctx, queue, f, streamRead{first: true, each: func(t *triage.Triaged) error {
		lines = append(lines, messageLineOf(t, red))
		return nil
	}})
	if err != nil {
		return err
	}
	return printMessageLines(w, s.Batch, f, lines)
}

// noteBound says on stderr when a read did not cover the queue, and why.
func noteBound(w io.Writer, b triage.Batch) {
	if b.HeldElsewhere > 0 { // another session or consumer holds them: not in this read
		fmt.Fprintf(w, "dlqt: %s: %s\n", sanitize.Line(b.Queue), views.HeldElsewhere(b))
	}
	switch {
	case !b.Truncated():
	case b.Bound != "":
		fmt.Fprintf(w, "dlqt: held %d of %d messages of %s: %s\n", b.Count(), b.Depth, sanitize.Line(b.Queue), b.Bound)
	default:
		fmt.Fprintf(w, "dlqt: read the first %d of %d messages of %s (--limit)\n", b.Count(), b.Depth, sanitize.Line(b.Queue))
	}
}
