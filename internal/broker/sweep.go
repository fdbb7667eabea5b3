package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dlqt/dlqt/internal/triage"
)

var (
	_ triage.Sweeper = (*Live)(nil)
	_ triage.Sweeper = (*Snapshot)(nil)
)

// ErrReadOnly refuses a change to something that is not a broker.
var ErrReadOnly = errors.New("a snapshot is read-only")

// Sweep holds up to opts.Limit messages of a queue exactly as Browse does,
// lets choose pick positions among them, and then, in this order: cancels
// the consumer, drains what the broker pushed meanwhile, acks each chosen
// delivery on its own (never multiple, so nothing unchosen is swept along),
// requeues the rest with one Nack(multiple, requeue), and closes the
// channel. Requeued messages go back to their places, so the queue keeps its
// order. If anything fails before the acks, nothing is acked: the close
// requeues it all. Streams cannot be swept: they never drop a message.
func (l *Live) Sweep(ctx context.Context, queue string, opts triage.BrowseOptions, choose func(held []triage.Message) []int) (triage.SweepResult, error) {
	var res triage.SweepResult
	// What it leaves is the queue's total for the next read, whatever the
	// management API's figures from before it say (returning.go); what
	// this process's last read left counts until the wait below.
	defer func() {
		if res.Depth > 0 {
			l.released.note(queue, max(0, res.Depth-len(res.Taken)), true)
		}
	}()
	limit := opts.Limit
	if limit <= 0 && opts.Each == nil { // one that keeps what it holds: the default's worth
		limit = triage.DefaultBrowseLimit
	}
	q, cost, err := l.queueInfo(ctx, queue)
	if err != nil {
		return res, err
	}
	if q.Type == triage.QueueStream {
		return res, fmt.Errorf("queue %q is a stream: its messages stay until retention drops them, so none can be taken out", queue)
	}
	conn, err := l.connection(ctx)
	if err != nil {
		return res, err
	}
	// The broker may still be returning an earlier read's messages (a
	// discard run right after a read of a million took the 164,756 back
	// of 1,000,000 and said "discarded 164756", exit 0): wait for them as
	// a read does, before the lease, whose own exclusive queue would read
	// as another actor's hold (returning.go).
	back, err := l.awaitReturns(ctx, conn, q, opts.Returning)
	if err != nil {
		return res, err
	}
	q = back.q
	l.released.forget(queue)
	lease, err := l.TakeLease(ctx, queue, "discarding from")
	if err != nil {
		return res, err
	}
	defer lease.Release()
	depth, err := passiveDepth(conn, queue, l.cfg.Vhost)
	if err != nil {
		return res, err
	}
	if cost.AsksFirst() && !opts.AcceptDeliveryCost {
		return res, triage.NewDeliveryCostError(queue, cost, depth)
	}
	res.Depth = depth
	// With opts.Each the hold hands each message on as it is read and
	// keeps only its delivery tag: what a discard may take, it keeps
	// itself; choose then gets no messages, and its positions are those
	// in the order Each saw them.
	want := depth // streamed, without a limit: the whole queue, as far as the broker's memory allows
	if limit > 0 {
		want = min(limit, depth)
	}
	if safe, why := l.safeHold(ctx, q, want); safe < want {
		want, res.Bound = safe, why
	}
	if back.returning > 0 && res.Bound == "" && want == depth {
		// Hold what is back, and count the rest in the depth: "held N of
		// M: the broker was still returning ...", a group's discard cut
		// short (exit 4), never the whole group over a part.
		res.Depth += back.returning
		res.Bound = stillReturning(back.returning)
	}
	r := reading{queue: queue, want: want, progress: opts.Progress, quorum: q.Type == triage.QueueQuorum,
		each: opts.Each, tags: true, owed: l.owedRule(conn, q, depth)}
	r.window, r.ahead = windowFor(opts, q)
	r.expected = r.want
	if r.want == 0 {
		r.report(0, true)
		return res, nil
	}
	h, err := r.hold(ctx, conn)
	if err != nil {
		return res, err
	}
	defer h.ch.Close() // requeues whatever is not settled below
	res.Held = h.read
	if h.stopErr != nil {
		// A partial hold would show choose a different batch than the
		// browse the user chose from: take nothing.
		_ = r.release(h)
		return res, fmt.Errorf("sweep of %q stopped after %d of %d messages, nothing taken (all released): %w", queue, h.read, r.want, h.stopErr)
	}

	picks := validPicks(choose(h.msgs), h.read)
	if err := h.stopConsuming(); err != nil {
		return res, fmt.Errorf("sweep of %q, nothing taken (all released): %w", queue, err)
	}
	// Another actor may have the queue if the lease's connection died:
	// the broker confirms the lease is still this reader's before the
	// first ack; a loss noticed during the acks waits for the lease to be
	// taken again, or stops them.
	if err := lease.Confirm(); err != nil {
		return res, fmt.Errorf("sweep of %q, nothing taken (all released): %w", queue, err)
	}
	if r.quorum {
		err = h.settleAfterAcks(lease, picks, &res)
	} else {
		err = h.settleInOrder(lease, picks, &res)
	}
	if err != nil {
		return res, fmt.Errorf("sweep of %q: %w", queue, err)
	}
	// The close waits for the broker's close-ok, so every ack above has
	// been processed when it returns without error.
	if err := h.ch.Close(); err != nil {
		return res, fmt.Errorf("sweep of %q: close: %w", queue, err)
	}
	return res, nil
}

// settleInOrder settles what a classic queue's sweep holds in delivery-tag
// order, giving back the messages not chosen in runs of settleRun. The
// broker finds the delivery an ack names by walking what the channel holds
// unsettled from the oldest, in the channel (rabbit_channel's collect_acks)
// and again in the queue (rabbit_queue_consumers' subtract_acks): acked
// behind every message not chosen, as they were until one Nack at the end,
// the acks of a group mixed with others cost the square of the queue
// (every fifth of 100,000: 568 s, against 13 s for all 100,000). Now, once
// settleRun messages not chosen are unsettled before the next chosen one,
// one Nack(multiple, requeue) gives them back, and the sweep waits until
// the queue counts them ready before its next ack: the queue process takes
// acks ahead of requeues waiting in its mailbox (gen_server2 priorities),
// so acks sent at once still walked past every message given back (100,000:
// 331 s; 20,000: 19 s, the queue showing none ready until the last ack).
// Not a Nack for every run between two chosen: one before every chosen
// message of such a group (runs of four) was slower than the walks. A
// classic queue puts every message given back at its place, so the order
// is kept, as with one Nack at the end; those given back before the last
// ack are ready again while the sweep goes on, under its lease.
func (h *held) settleInOrder(lease *Lease, picks []int, res *triage.SweepResult) error {
	next := 0      // the first held position after the last chosen one
	unsettled := 0 // positions not chosen before next and not given back
	base, back := -1, 0
	for _, p := range picks {
		if err := lease.Check(); err != nil { // waits while it is taken again
			return fmt.Errorf("took %d of %d chosen messages, the rest are released: %w", len(res.Taken), len(picks), err)
		}
		if unsettled += p - next; unsettled >= settleRun {
			// p > next: position p-1 is one not chosen, and every chosen
			// one before it is acked.
			if base < 0 {
				base = h.win.ready()
			}
			if err := h.ch.Nack(h.tags[p-1], true, true); err != nil {
				return fmt.Errorf("took %d of %d chosen messages, the rest are released: %w", len(res.Taken), len(picks), err)
			}
			if back += unsettled; base >= 0 {
				h.win.awaitReady(base + back) // at most requeueWait: only the speed is at stake
			}
			unsettled = 0
		}
		if err := h.ch.Ack(h.tags[p], false); err != nil {
			return fmt.Errorf("took %d of %d chosen messages, the rest are released: %w", len(res.Taken), len(picks), err)
		}
		res.Taken = append(res.Taken, p)
		next = p + 1
	}
	// The rest: those not given back before the last chosen one, the held
	// after it, and deliveries drained after the cancel (never acked:
	// lastUnacked).
	// lastUnacked names the highest of them: a Nack that named a tag acked
	// or given back already would close the channel.
	drained := h.lastTag > 0 && (len(h.tags) == 0 || h.lastTag > h.tags[len(h.tags)-1])
	if unsettled > 0 || next < len(h.tags) || drained {
		if err := h.ch.Nack(h.lastUnacked(picks), true, true); err != nil {
			return fmt.Errorf("requeue the rest: %w", err)
		}
	}
	return nil
}

// settleRun is how many messages not chosen a classic queue's sweep lets
// an ack walk past before it gives them back (settleInOrder): the raw
// amqp091-go reference of make bench holds 2,048 a channel.
const settleRun = 2048

// settleAfterAcks acks the chosen messages of a quorum queue's sweep, then
// gives back the rest consumer by consumer (window.requeue), which keeps a
// quorum queue's order.
func (h *held) settleAfterAcks(lease *Lease, picks []int, res *triage.SweepResult) error {
	for _, p := range picks {
		if err := lease.Check(); err != nil { // waits while it is taken again
			return fmt.Errorf("took %d of %d chosen messages, the rest are released: %w", len(res.Taken), len(picks), err)
		}
		if err := h.ch.Ack(h.tags[p], false); err != nil {
			return fmt.Errorf("took %d of %d chosen messages, the rest are released: %w", len(res.Taken), len(picks), err)
		}
		res.Taken = append(res.Taken, p)
	}
	if last := h.lastUnacked(picks); last > 0 {
		if err := h.win.requeue(last, h.unacked(res.Taken)); err != nil {
			return fmt.Errorf("requeue the rest: %w", err)
		}
	}
	return nil
}

// lastUnacked is the highest delivery tag not acked once the positions in
// acked (ascending) are: a multiple Nack must name a tag still pending, else
// the broker closes the channel. Deliveries drained after the cancel are
// never acked. Zero means nothing is left to requeue.
func (h *held) lastUnacked(acked []int) uint64 {
	if n := len(h.tags); n == 0 || h.lastTag > h.tags[n-1] {
		return h.lastTag
	}
	for i := len(h.tags) - 1; i >= 0; i-- {
		if _, found := slices.BinarySearch(acked, i); !found {
			return h.tags[i]
		}
	}
	return 0
}

// unacked says, for window.requeue, which delivery tags are still
// pending once the positions acked were.
func (h *held) unacked(acked []int) func(tag uint64) bool {
	if len(h.win.bounds) == 0 {
		return nil // one Nack: requeue asks nothing
	}
	done := make(map[uint64]bool, len(acked))
	for _, p := range acked {
		done[h.tags[p]] = true
	}
	return func(tag uint64) bool { return !done[tag] }
}

// validPicks keeps the positions that name a held message, once each, in
// ascending order: a wrong index must never ack a message nobody chose.
func validPicks(picks []int, n int) []int {
	out := make([]int, 0, len(picks))
	for _, p := range picks {
		if p >= 0 && p < n {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Sweep refuses: a snapshot is a file of what a queue held, not the queue.
func (s *Snapshot) Sweep(ctx context.Context, queue string, opts triage.BrowseOptions, choose func(held []triage.Message) []int) (triage.SweepResult, error) {
	return triage.SweepResult{}, fmt.Errorf("%w: open the broker to change queue %q", ErrReadOnly, queue)
}
