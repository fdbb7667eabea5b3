package ui

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/doctor"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/views"
)

// Every broker and journal call runs in one of these commands, never in
// Update. Each reply names the screen that asked (reply) and carries the id
// of the request; the screen keeps the id it still waits for and drops any
// other reply, so a slow answer for a screen the user has left never lands
// on the wrong one.

// engine is the read path the TUI drives: the same use cases the headless
// commands call.
type engine struct {
	listParking func(context.Context, triage.Reader, []string) ([]triage.ParkingQueue, triage.Topology, error)
	inspect     func(context.Context, triage.Reader, string, triage.BrowseOptions, *redact.Redactor) (triage.Inspection, error)
	inspectEach func(context.Context, triage.Reader, string, triage.BrowseOptions, triage.StreamOptions) (triage.Streamed, error)
	discard     func(context.Context, triage.Sweeper, triage.Topology, triage.Recorder, triage.DiscardRequest) (triage.DiscardResult, error)
	runReplay   func(context.Context, replay.Plan, replay.Port, triage.Recorder, <-chan replay.Command, func(replay.Progress)) (replay.Result, error)
}

func triageEngine() engine {
	return engine{listParking: triage.ListParking, inspect: triage.Inspect, inspectEach: triage.InspectEach, discard: triage.Discard, runReplay: replay.Run}
}

// parkingMsg answers a queue list request.
// The doctor's verdict on the same topology comes along, for the header's
// count: diagnosing what was read anyway costs no broker call.
type parkingMsg struct {
	id       int
	broker   triage.Broker // for the status line
	queues   []triage.ParkingQueue
	findings []doctor.Finding
	at       time.Time // when it was read, for the ingress between polls
	err      error
}

func listCmd(ctx context.Context, e engine, r triage.Reader, patterns []string, id int, now func() time.Time) tea.Cmd {
	return func() tea.Msg {
		qs, top, err := e.listParking(ctx, r, patterns)
		if err != nil {
			return parkingMsg{id: id, err: err}
		}
		return parkingMsg{id: id, broker: top.Broker, queues: qs, findings: doctor.Diagnose(top, qs), at: now()}
	}
}

// browseProgressMsg reports how far a browse got; inspectedMsg ends it.
type browseProgressMsg struct {
	id             int
	read, expected int
	// live, when set, is the groups of what was read so far (no messages):
	// the groups screen fills in while the browse goes on.
	live *triage.Inspection
	// returning, when above 0, is how many messages of an earlier read
	// the browse waits for the broker to return before it reads.
	returning int
}

type inspectedMsg struct {
	id    int
	queue string
	insp  triage.Inspection
	ages  views.ReadAges // its oldest and newest message, taken as it read
	err   error
	// spillErr says why the messages are kept whole in memory, not on disk.
	spillErr error
	store    spillStore // where insp's index entries read back from
}

// browse is one Inspect in flight. Progress comes from the reader's
// goroutine through a one-slot channel that keeps only the latest count, so
// a slow screen never slows the browse (which holds messages unacked).
type browse struct {
	id       int
	queue    string
	cancel   context.CancelFunc
	progress chan browseProgressMsg
	done     chan inspectedMsg
	expected atomic.Int64 // the last total the reader reported
	// indexBudget bounds the index entries a spilled read keeps.
	indexBudget int64
	spillErr    error      // set by the reading goroutine before done
	store       spillStore // this read's spill store, nil when none; ditto
}

func newBrowse(parent context.Context, id int, queue string) (*browse, context.Context) {
	ctx, cancel := context.WithCancel(parent)
	return &browse{
		id: id, queue: queue, cancel: cancel,
		progress: make(chan browseProgressMsg, 1),
		done:     make(chan inspectedMsg, 1),
	}, ctx
}

// report publishes the latest progress without ever blocking the reader.
func (b *browse) report(read, expected int) {
	b.expected.Store(int64(expected))
	b.publish(browseProgressMsg{id: b.id, read: read, expected: expected})
}

// returning publishes that the browse waits for the broker to return n
// messages of an earlier read.
func (b *browse) returning(n int) {
	b.publish(browseProgressMsg{id: b.id, returning: n})
}

func (b *browse) publish(p browseProgressMsg) {
	select {
	case b.progress <- p:
		return
	default:
	}
	select { // drop the stale count the screen has not taken yet
	case <-b.progress:
	default:
	}
	select {
	case b.progress <- p:
	default:
	}
}

// start runs the inspection and waits for its first news.
func (b *browse) start(ctx context.Context, e engine, r triage.Reader, opts triage.BrowseOptions, red *redact.Redactor, spills *spillSet) tea.Cmd {
	return func() tea.Msg {
		go func() {
			opts.Progress, opts.Returning = b.report, b.returning
			var insp triage.Inspection
			var ages views.ReadAges
			var err error
			if e.inspectEach != nil {
				insp, err = b.stream(ctx, e, r, opts, red, spills, &ages)
			} else {
				insp, err = e.inspect(ctx, r, b.queue, opts, red)
				ages = views.AgesOf(insp.List())
			}
			b.done <- inspectedMsg{id: b.id, queue: b.queue, insp: insp, ages: ages, err: err, spillErr: b.spillErr, store: b.store}
		}()
		return b.wait()
	}
}

// liveEvery is how often a browse shows the groups of what it read so far.
const liveEvery = 200 * time.Millisecond

// stream inspects the queue streamed (triage.InspectEach), publishing the
// groups of what was read so far with the progress: the first groups are on
// screen as soon as the first messages are read, not after the last.
//
// Each message goes whole to a spill store on disk; the inspection keeps
// its index entry (triage.Spilled.Index), which reads it back when a
// screen needs more. Without a store (no cache directory) it keeps whole
// messages, as before, and the budget counts them so.
//
// ages takes in each message kept, for the queues screen.
func (b *browse) stream(ctx context.Context, e engine, r triage.Reader, opts triage.BrowseOptions, red *redact.Redactor, spills *spillSet, ages *views.ReadAges) (triage.Inspection, error) {
	var kept []triage.Triaged
	live := triage.NewGrouper(false)
	var shown time.Time
	store, spillErr := spills.create()
	budget := keepBudget{limit: opts.MemoryBudget}
	if store != nil {
		budget.limit = b.indexBudget
	}
	b.store = store
	var index *triage.Spilled
	var packed *triage.Index
	if store != nil {
		index = triage.NewSpilled(store, red)
		packed = triage.NewIndex(min(int(b.expected.Load()), maxIndexRoom))
	}
	// An index entry keeps no payload (the message screen derives it again
	// from the spilled message), so a spilled read renders none: the
	// costliest part of triage, skipped for every message read.
	s, err := e.inspectEach(ctx, r, b.queue, opts, triage.StreamOptions{Redactor: red, Payloads: index == nil,
		Each: func(t *triage.Triaged) (bool, error) {
			var read int
			if index != nil {
				t.Message.Position = packed.Len() // the order this browse saw it: the store's key
				if err := store.Put(t.Message); err != nil {
					return false, err
				}
				entry := index.Index(*t)
				if !budget.take(packed.Append(&entry)) {
					packed.Truncate(packed.Len() - 1)
					return false, errBudget
				}
				read = packed.Len()
			} else {
				cost := wholeCost(t)
				if !budget.take(cost) {
					return false, errBudget
				}
				if kept == nil {
					kept = make([]triage.Triaged, 0, keptCap(int(b.expected.Load()), opts.Limit, budget.limit, cost))
				}
				kept = append(kept, *t)
				read = len(kept)
			}
			live.Add(t, read-1)
			ages.Note(t)
			if time.Since(shown) >= liveEvery {
				shown = time.Now()
				partial := triage.Inspection{Batch: triage.Batch{Queue: b.queue, Read: read}, Groups: live.Groups()}
				b.publish(browseProgressMsg{id: b.id, read: read, expected: int(b.expected.Load()), live: &partial})
			}
			return true, nil
		}})
	read := len(kept)
	if packed != nil {
		read = packed.Len()
	}
	if errors.Is(err, errBudget) { // a bound, not a failure: say which
		err, s.Batch.Err, s.Batch.Read = nil, nil, read
		s.Batch.Bound = budget.String()
	}
	if s.Batch.Bound == "" && opts.Limit > 0 && s.Batch.Count() >= opts.Limit && s.Batch.Truncated() {
		s.Batch.Bound = fmt.Sprintf("--limit %d", opts.Limit)
	}
	if index != nil {
		index.UseTopology(s.Topology)
		if ferr := store.Flush(); ferr != nil && err == nil {
			err = ferr
		}
	}
	b.spillErr = spillErr
	if packed != nil {
		return triage.Inspection{Batch: s.Batch, Topology: s.Topology, Entries: packed, Groups: triage.GroupList(packed)}, err
	}
	return triage.Inspection{Batch: s.Batch, Topology: s.Topology, Messages: kept, Groups: triage.GroupMessages(kept)}, err
}

// maxIndexRoom is the most entries a read makes room for at its start
// (8 bytes each); a larger queue's index grows as it is read.
const maxIndexRoom = 4 << 20

var errBudget = errors.New("the memory budget is spent")

// DefaultIndexBudget is what a spilled browse's index entries may take
// when the user set no --memory-budget: packed (triage.Index), about a
// hundred bytes an entry, a queue of over a million messages (the
// read-ahead stays at DefaultMemoryBudget).
const DefaultIndexBudget = 128 << 20

// keptCap is the room to make for a read's entries once the first is in:
// what the queue holds, within the limit and what the budget can take at
// the first entry's cost. Grown by append instead, a slice of 100,000
// entries is copied a dozen times and, while the last copy runs, held
// twice.
func keptCap(expected, limit int, budget, cost int64) int {
	n := expected
	if limit > 0 {
		n = min(n, limit)
	}
	if cost > 0 {
		n = min(n, int(budget/cost)+1)
	}
	return max(n, 1)
}

// keepBudget bounds by bytes what a browse keeps in memory for the screens.
type keepBudget struct {
	limit, spent int64
}

// wholeCost is what a whole message kept in memory costs: about its body
// twice (as read, and in the views and the search cache), its rendered
// payload and a kilobyte of the rest.
func wholeCost(t *triage.Triaged) int64 {
	return 2*int64(len(t.Message.Body)) + int64(len(t.Payload)) + 1024
}

func (k *keepBudget) take(cost int64) bool {
	if k.limit <= 0 {
		k.limit = triage.DefaultMemoryBudget
	}
	if k.spent+cost > k.limit && k.spent > 0 {
		return false
	}
	k.spent += cost
	return true
}

func (k *keepBudget) String() string {
	return fmt.Sprintf("dlqt memory budget (%s; --memory-budget)", humanBytes(k.limit))
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d B", n)
	}
}

// next waits for the browse's next progress or its end.
func (b *browse) next() tea.Cmd {
	return func() tea.Msg { return b.wait() }
}

func (b *browse) wait() tea.Msg {
	select {
	case d := <-b.done:
		return d
	case p := <-b.progress:
		return p
	}
}

// tagsMsg answers a request for the tags of the inspected messages.
type tagsMsg struct {
	id    int
	queue string
	tags  map[string][]string
	back  map[string]uint64 // discarded in the journal, yet read again: id -> the discard's entry
	err   error
}

// tagsCmd reads the tags of read's messages; their ids are unpacked in
// the command, not in Update (a packed read of 1,000,000 takes half a
// second to unpack).
func tagsCmd(j TagStore, vhost, queue string, read triage.List, id int) tea.Cmd {
	return func() tea.Msg {
		ids := triage.IDs(read)
		tags, err := j.Tags(vhost, queue, ids)
		var back map[string]uint64
		if err == nil {
			back, err = markDiscarded(j, vhost, queue, ids, tags)
		}
		return tagsMsg{id: id, queue: queue, tags: tags, back: back, err: err}
	}
}

// DiscardIndex says which messages the journal recorded as discarded;
// *journal.Journal is one.
type DiscardIndex interface {
	Discarded(vhost, queue string, ids []string) (map[string]uint64, error)
}

// markDiscarded shows, beside a message's tags, that the journal says it
// was discarded: it is back (a broker restart before the ack was applied,
// or published again). Lists and the message screen show tags already.
// It returns them, each with the discard's entry, for a retry.
func markDiscarded(j TagStore, vhost, queue string, ids []string, tags map[string][]string) (map[string]uint64, error) {
	d, ok := j.(DiscardIndex)
	if !ok {
		return nil, nil
	}
	found, err := d.Discarded(vhost, queue, ids)
	if err != nil {
		return nil, err
	}
	for id, seq := range found {
		tags[id] = append(tags[id], fmt.Sprintf("discarded in journal #%d, back", seq))
	}
	return found, markInterrupted(j, vhost, queue, ids, tags)
}

// DiscardOutcomes reads the outcome entry of a discard, for its reason and
// ids when it is retried; *journal.Journal is one.
type DiscardOutcomes interface {
	DiscardOutcome(seq uint64, vhost, queue string) (journal.Entry, error)
}

// InterruptedIndex says which messages a discard selected that never
// journaled its outcome (dlqt was killed during it); *journal.Journal is one.
type InterruptedIndex interface {
	DiscardsInterrupted(vhost, queue string, ids []string) (map[string]uint64, error)
}

// markInterrupted shows that a discard selected the message and was
// interrupted: it is still here, not discarded.
func markInterrupted(j TagStore, vhost, queue string, ids []string, tags map[string][]string) error {
	d, ok := j.(InterruptedIndex)
	if !ok {
		return nil
	}
	found, err := d.DiscardsInterrupted(vhost, queue, ids)
	if err != nil {
		return err
	}
	for id, seq := range found {
		tags[id] = append(tags[id], fmt.Sprintf("selected by discard #%d, interrupted: still here", seq))
	}
	return nil
}

// taggedMsg answers a tag written to the journal, with the message's tags
// as the journal now has them.
type taggedMsg struct {
	queue     string
	messageID string
	tags      []string
	err       error
}

func tagCmd(j interface {
	EntryRecorder
	TagStore
}, e journal.Entry) tea.Cmd {
	return func() tea.Msg {
		id := e.MessageIDs[0]
		if _, err := j.Append(e); err != nil {
			return taggedMsg{queue: e.Queue, messageID: id, err: err}
		}
		tags, err := j.Tags(e.Vhost, e.Queue, []string{id})
		return taggedMsg{queue: e.Queue, messageID: id, tags: tags[id], err: err}
	}
}

func (parkingMsg) owner() screenID        { return screenQueues }
func (browseProgressMsg) owner() screenID { return screenGroups }
func (inspectedMsg) owner() screenID      { return screenGroups }
func (tagsMsg) owner() screenID           { return screenGroups }
func (taggedMsg) owner() screenID         { return screenGroups }
