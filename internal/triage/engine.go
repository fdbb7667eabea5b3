package triage

import (
	"context"
	"fmt"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

// The use cases of the read path. The TUI and the headless commands call
// these same functions, so both faces show the same answers.

// ListParking reads the topology and returns its parking queues.
func ListParking(ctx context.Context, r Reader, patterns []string) ([]ParkingQueue, Topology, error) {
	top, err := r.Topology(ctx)
	if err != nil {
		return nil, Topology{}, err
	}
	return FindParkingQueues(top, patterns), top, nil
}

// Inspection is one browsed queue, understood.
type Inspection struct {
	Batch    Batch // the raw messages, as read
	Topology Topology
	Messages []Triaged // same order as Batch.Messages; nil when Entries holds them
	// Entries, when set, holds the messages instead of Messages: a
	// spilled read's packed index (the TUI), or what a filter matched of
	// a read. Len, At and List read either.
	Entries List
	Groups  []Group // Members index the messages
}

// List is the inspection's messages, wherever they are held.
func (in *Inspection) List() List {
	if in.Entries != nil {
		return in.Entries
	}
	return Slice(in.Messages)
}

// Len is how many messages the inspection holds.
func (in *Inspection) Len() int {
	if in.Entries != nil {
		return in.Entries.Len()
	}
	return len(in.Messages)
}

// At is the inspection's message i.
func (in *Inspection) At(i int) Triaged {
	if in.Entries != nil {
		return in.Entries.At(i)
	}
	return in.Messages[i]
}

// Inspect browses a queue (bounded, see BrowseOptions) and triages what it read.
// A browse that failed midway still yields an Inspection of what was read,
// together with the error.
func Inspect(ctx context.Context, r Reader, queue string, opts BrowseOptions, red *redact.Redactor) (Inspection, error) {
	top, err := r.Topology(ctx)
	if err != nil {
		return Inspection{}, err
	}
	if _, ok := top.Queue(queue); !ok {
		return Inspection{}, fmt.Errorf("queue %q: %w in vhost %q", queue, ErrNotFound, top.Vhost)
	}
	batch, err := r.Browse(ctx, queue, opts)
	if err != nil && len(batch.Messages) == 0 {
		return Inspection{Batch: batch, Topology: top}, err
	}
	ts := Analyze(batch, top, red)
	return Inspection{Batch: batch, Topology: top, Messages: ts, Groups: GroupMessages(ts)}, err
}

// Queue finds a queue of the topology by name.
func (t Topology) Queue(name string) (Queue, bool) {
	for _, q := range t.Queues {
		if q.Name == name {
			return q, true
		}
	}
	return Queue{}, false
}
