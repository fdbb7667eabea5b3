package triage

import (
	"context"
	"fmt"
	"hash/maphash"
	"runtime"
	"strconv"
	"sync"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

// A streamed inspection triages a queue of any size while it is read: the
// broker hands each message over as it arrives (BrowseOptions.Each), a
// small pool of workers decodes, classifies and redacts chunks of them, and
// one goroutine puts the chunks back in queue order, gives each message its
// identity (the occurrence suffix needs the order), groups it and hands it to
// the caller. Nothing of a message is kept after that but its group's
// counts: memory is a few chunks, not the queue.

// chunkSize is how many messages a worker triages at a time, once the
// read is under way; the first chunks are smaller (chunkLen), so the first
// message is grouped as soon as it is read, not once 256 are.
const chunkSize = 256

// chunkBytes closes a chunk of large messages early: the pipeline holds a
// few chunks at a time, so its memory is bounded in bytes, not only in
// messages.
const chunkBytes = 1 << 20

func chunkLen(seq int) int { return min(chunkSize, 1<<(2*min(seq, 4))) }

// EachFunc takes one triaged message, in queue order. It returns whether
// the message counts in the groups (a filter matched it), or an error that
// stops the read; the message must not be kept past the call unless copied.
type EachFunc func(t *Triaged) (bool, error)

// Streamed is what InspectEach returns: the batch holds no messages, Read
// says how many were read and Groups what they make.
type Streamed struct {
	Batch    Batch
	Topology Topology
	Groups   []Group
	Matched  int // messages each counted
}

// StreamOptions steer a streamed inspection.
type StreamOptions struct {
	Redactor *redact.Redactor
	// Payloads renders each message's redacted payload (Triaged.Payload)
	// and builds its attempt timeline, the costliest parts of triage;
	// grouping, the lists and filtering on fields need neither.
	Payloads bool
	Each     EachFunc
}

// InspectEach browses queue as Inspect does, handing every message to
// so.Each as soon as it is triaged. A browse that failed midway still
// reports what was read, with the error.
func InspectEach(ctx context.Context, r Reader, queue string, opts BrowseOptions, so StreamOptions) (Streamed, error) {
	top, err := r.Topology(ctx)
	if err != nil {
		return Streamed{}, err
	}
	if _, ok := top.Queue(queue); !ok {
		return Streamed{}, fmt.Errorf("queue %q: %w in vhost %q", queue, ErrNotFound, top.Vhost)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := newPipeline(top, so, cancel)
	opts.Each = p.take
	batch, err := r.Browse(ctx, queue, opts)
	for _, m := range batch.Messages { // a reader that does not stream
		if p.take(m) != nil {
			break
		}
	}
	batch.Read = max(batch.Read, len(batch.Messages))
	batch.Messages = nil
	if perr := p.finish(); perr != nil {
		err = perr // the caller's own error says why the read stopped
	}
	return Streamed{Batch: batch, Topology: top, Groups: p.groups.Groups(), Matched: p.matched}, err
}

type chunk struct {
	seq   int
	bytes int // of the bodies
	msgs  []Message
	out   []Triaged
}

// pipeline is the machinery of InspectEach.
type pipeline struct {
	r       *router
	so      StreamOptions
	stop    context.CancelFunc
	work    chan *chunk
	done    chan *chunk
	workers sync.WaitGroup
	sunk    chan struct{}
	filling *chunk
	seq     int

	// owned by sink
	ids     idSuffixer
	groups  *Grouper
	read    int
	matched int
	err     error
}

func newPipeline(top Topology, so StreamOptions, stop context.CancelFunc) *pipeline {
	n := max(1, runtime.GOMAXPROCS(0))
	p := &pipeline{
		r: newRouter(top), so: so, stop: stop,
		work: make(chan *chunk), done: make(chan *chunk), sunk: make(chan struct{}),
		ids: newIDSuffixer(), groups: NewGrouper(false),
	}
	for range n {
		p.workers.Add(1)
		go p.worker()
	}
	go p.sink()
	return p
}

// take is BrowseOptions.Each: it runs on the reading goroutine.
func (p *pipeline) take(m Message) error {
	if p.filling == nil {
		p.filling = &chunk{seq: p.seq, msgs: make([]Message, 0, chunkLen(p.seq))}
		p.seq++
	}
	p.filling.msgs = append(p.filling.msgs, m)
	p.filling.bytes += len(m.Body)
	if len(p.filling.msgs) == cap(p.filling.msgs) || p.filling.bytes >= chunkBytes {
		p.work <- p.filling
		p.filling = nil
	}
	return nil // an error of each cancels the read's context instead
}

func (p *pipeline) worker() {
	defer p.workers.Done()
	for c := range p.work {
		c.out = make([]Triaged, len(c.msgs))
		for i, m := range c.msgs {
			env := EnvelopeOf(m)
			id := BaseIDs(c.msgs[i:i+1], []Envelope{env})[0]
			c.out[i] = analyzeOne(p.r, m, env, id, p.so.Redactor, p.so.Payloads)
		}
		c.msgs = nil
		p.done <- c
	}
}

// sink puts chunks back in order and hands their messages on.
func (p *pipeline) sink() {
	defer close(p.sunk)
	waiting := map[int]*chunk{}
	next := 0
	for c := range p.done {
		waiting[c.seq] = c
		for c, ok := waiting[next]; ok; c, ok = waiting[next] {
			delete(waiting, next)
			next++
			if p.err == nil {
				p.sinkChunk(c)
			}
		}
	}
}

func (p *pipeline) sinkChunk(c *chunk) {
	for i := range c.out {
		t := &c.out[i]
		t.ID = p.ids.assign(t.ID)
		counts, err := p.so.Each(t)
		if err != nil {
			p.err = err
			p.stop()
			return
		}
		if counts {
			p.groups.Add(t, p.read)
			p.matched++
		}
		p.read++
	}
}

// finish flushes the last chunk and waits for the sink.
func (p *pipeline) finish() error {
	if p.filling != nil && len(p.filling.msgs) > 0 {
		p.work <- p.filling
	}
	close(p.work)
	p.workers.Wait()
	close(p.done)
	<-p.sunk
	return p.err
}

// idSuffixer gives identical ids their occurrence suffix in queue order, as
// Identify does for a whole batch, remembering only a hash of each id seen.
// (Identify also avoids a suffix that a LATER base id takes; a stream cannot
// know those, so there that later message gets the next suffix instead.)
type idSuffixer struct {
	seed maphash.Seed
	seen *hashCounts
}

func newIDSuffixer() idSuffixer {
	return idSuffixer{seed: maphash.MakeSeed(), seen: &hashCounts{}}
}

func (s *idSuffixer) assign(base string) string {
	h := maphash.String(s.seed, base)
	n := s.seen.get(h) + 1
	s.seen.set(h, n)
	if n == 1 {
		return base
	}
	for {
		cand := base + "#" + strconv.Itoa(int(n))
		hc := maphash.String(s.seed, cand)
		if s.seen.get(hc) == 0 {
			s.seen.set(hc, 1)
			s.seen.set(h, n)
			return cand
		}
		n++
	}
}
