package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// How long a browse waits for the broker. Messages held unacked by another
// consumer are not ready and never arrive, so a browse stops on silence, but
// only once the queue has nothing ready left: a 3.10 classic queue has been
// seen pausing over 2 s in the middle of 10,000 deliveries.
const (
	firstMessageWait = 1 * time.Second         // nothing at all arrives
	idleGap          = 1500 * time.Millisecond // after the last message
	maxStall         = 30 * time.Second        // ready messages that never come
	streamTailGap    = 250 * time.Millisecond  // a stream read past its reported length
	releaseWait      = 10 * time.Second        // draining deliveries after basic.cancel
	progressEvery    = 100
)

// Browse reads up to opts.Limit messages of a queue without taking them, as
// docs/ARCHITECTURE.md explains:
//
//   - classic queues, and quorum queues without a delivery limit: held with
//     basic.consume (manual ack), then the consumer is cancelled and every
//     message released with one Nack(multiple, requeue). Order is kept; the
//     broker sets redelivered. (A quorum queue's release over several
//     consumers goes a consumer at a time: window.requeue.)
//   - quorum queues with a delivery limit: refused with a DeliveryCostError
//     unless opts.AcceptDeliveryCost. Verified on 3.10.8: each browse adds
//     exactly 1 to x-delivery-count (absent = 0), and a message delivered
//     with x-delivery-count equal to the limit is dead-lettered (or dropped)
//     by its release; x-delivery-limit 0 dead-letters on the first release.
//     The consumer MUST be cancelled before the Nack: a message requeued to a
//     live consumer is redelivered at once and counted twice.
//   - streams: read by offset from the first message and acked as read
//     (acks only give credit); nothing to release.
//
// A browse that stops early returns every message read so far with Batch.Err
// set and the same error; the channel close requeues whatever was held.
func (l *Live) Browse(ctx context.Context, queue string, opts triage.BrowseOptions) (triage.Batch, error) {
	limit := opts.Limit
	whole := limit <= 0 && opts.Each != nil // a streamed read takes the whole queue
	if limit <= 0 {
		limit = triage.DefaultBrowseLimit
	}
	b := triage.Batch{Vhost: l.cfg.Vhost, Queue: queue, Limit: limit, TakenAt: time.Now().UTC()}
	q, cost, err := l.queueInfo(ctx, queue)
	if err != nil {
		return b, err
	}
	conn, err := l.connection(ctx)
	if err != nil {
		return b, err
	}
	r := reading{queue: queue, progress: opts.Progress, each: opts.Each, quorum: q.Type == triage.QueueQuorum}
	r.window, r.ahead = windowFor(opts, q)

	if q.Type == triage.QueueStream {
		// A passive declare reports 0 for a stream: take the management count
		// and read on past it, since that count may lag a few seconds.
		b.Depth = q.Messages
		r.want, r.expected = limit, min(limit, b.Depth)
		r.stream = true
		b.Messages, b.Read, err = r.read(ctx, conn)
		b.Depth = max(b.Depth, b.Read)
		return finish(b, err)
	}

	// The broker may still be returning an earlier read's messages: wait
	// for them (returning.go), or say how many were not back.
	back, err := l.awaitReturns(ctx, conn, q, opts.Returning)
	if err != nil {
		return b, err
	}
	q, b.Depth = back.q, back.ready
	b.HeldElsewhere = max(0, heldElsewhere(q, b.Depth)-back.returning)
	if b.HeldElsewhere > 0 && back.consumers > 0 {
		b.HeldBy = l.consumerConnections(ctx, queue, conn)
	}
	r.owed = l.owedRule(conn, q, b.Depth)
	if cost.AsksFirst() && !opts.AcceptDeliveryCost {
		return b, triage.NewDeliveryCostError(queue, cost, b.Depth)
	}
	if whole {
		limit = max(b.Depth, 1)
		b.Limit = limit
	}
	r.want = min(limit, b.Depth)
	if safe, why := l.safeHold(ctx, q, r.want); safe < r.want {
		r.want, b.Limit, b.Bound = safe, safe, why
	}
	if back.returning > 0 && r.want == b.Depth {
		// Read what is back, and count the rest in the depth, so that
		// the read is "held N of M: the broker was still returning ...".
		b.Depth += back.returning
		b.Bound = stillReturning(back.returning)
	}
	r.expected = r.want
	if r.want == 0 {
		r.report(0, true)
		return b, nil
	}
	b.Messages, b.Read, err = r.read(ctx, conn)
	// What it read is on its way back to the queue (returning.go).
	l.released.note(queue, b.Depth, false)
	if isDecodeFailure(err) { // see quarantine.go
		return l.readPastUnreadable(ctx, b, r, err, q.Type == triage.QueueClassic)
	}
	if short := shortOf(err); short != nil {
		// Another consumer took the rest after the read began: they are
		// held elsewhere, not ready for this read, and said so.
		b.Depth, b.HeldElsewhere = b.Read, b.HeldElsewhere+short.n
		b.Bound, err = short.why(), nil
		if len(b.HeldBy) == 0 {
			b.HeldBy = l.consumerConnections(ctx, queue, conn)
		}
	}
	return finish(b, err)
}

// windowFor is how much a streamed browse lets the broker push ahead of the
// reader: a quarter of the memory budget (memoryWindow), the first window
// from the queue's statistics and the next ones from the sizes read. A
// browse that keeps every message gets the largest window: it holds them
// all anyway.
func windowFor(opts triage.BrowseOptions, q triage.Queue) (first int, ahead int64) {
	if opts.Each == nil {
		return 0, 0
	}
	return memoryWindow(opts.MemoryBudget, q)
}

func finish(b triage.Batch, err error) (triage.Batch, error) {
	if err != nil {
		b.Err = err
	}
	return b, err
}

// passiveDepth counts the ready messages of a queue (passiveCounts).
func passiveDepth(conn *amqp.Connection, queue, vhost string) (int, error) {
	ready, _, err := passiveCounts(conn, queue, vhost)
	return ready, err
}

// reading is one consume of one queue.
type reading struct {
	queue    string
	want     int // stop after this many
	expected int // what progress reports as the total
	stream   bool
	quorum   bool  // see window.serial
	window   int   // prefetch of the first consumer; 0 = as much as one may ask
	ahead    int64 // bytes the window may let the broker push (window.ahead); 0 = fixed
	progress func(read, expected int)
	// each, when set, takes every message as it is read, in order, and
	// the hold keeps none of them: memory stays one window however many
	// messages are held. An error from each stops the reading.
	each func(triage.Message) error
	// tags keeps the delivery tag of each message handed to each, for a
	// sweep that acks some of them afterwards.
	tags bool
	// owed decides whether a silence ends the read (silence.go).
	owed *owedRule
}

func (r reading) report(n int, final bool) {
	if r.progress != nil && (final || n%progressEvery == 0) {
		r.progress(n, max(r.expected, n))
	}
}

// prefetch is the credit of each consumer of the hold (see window.go): a
// window, never unlimited. A stream needs a bounded window and gets its
// credit back from the acks.
func (r reading) prefetch() int {
	if r.stream {
		return min(max(r.want, 1), 1000)
	}
	if r.window > 0 {
		return min(r.window, max(r.want, 1), math.MaxUint16)
	}
	return min(max(r.want, 1), math.MaxUint16)
}

func (r reading) read(ctx context.Context, conn *amqp.Connection) ([]triage.Message, int, error) {
	h, err := r.hold(ctx, conn)
	if err != nil {
		return nil, 0, err
	}
	// Closing the channel requeues anything still held, but on a quorum
	// queue a close counts toward the delivery limit even where a requeue
	// is free (4.3): release is the way out, the close only the last resort.
	defer h.ch.Close()
	stopErr := h.stopErr
	if !h.ch.IsClosed() {
		if err := r.release(h); err != nil && stopErr == nil {
			stopErr = err
		}
	}
	if stopErr != nil {
		return h.msgs, h.read, fmt.Errorf("browse of %q stopped after %d of %d messages (all released): %w",
			r.queue, h.read, r.expected, stopErr)
	}
	return h.msgs, h.read, nil
}

// held is a consume that has stopped reading: its messages are delivered and
// (but for a stream's) unacked. The caller settles them and closes ch, which
// requeues whatever is still unacked.
type held struct {
	ch      *amqp.Channel
	win     *window
	read    int              // messages read
	msgs    []triage.Message // kept unless the reading hands them to each
	tags    []uint64         // delivery tag of each message kept (or handed to each, with reading.tags)
	lastTag uint64
	stopErr error // why reading stopped before r.want, if it did
	stopped bool  // its consumers are cancelled
}

// hold consumes up to r.want messages and keeps them unacked. An error means
// nothing is held; otherwise the caller owns h.ch.
func (r reading) hold(ctx context.Context, conn *amqp.Connection) (*held, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open channel: %w", err)
	}
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	var args amqp.Table
	want := r.want
	if r.stream {
		args = amqp.Table{"x-stream-offset": "first"}
		want = r.prefetch() // one consumer; the acks give the credit back
	}
	h := &held{ch: ch, win: newWindow(ch, r.queue, args, r.prefetch(), want)}
	if !r.stream {
		h.win.ahead = r.ahead
	}
	h.win.serial = r.quorum
	if err := h.win.grow(); err != nil {
		ch.Close()
		return nil, err
	}
	r.report(0, true)
	r.consume(ctx, h, closed)
	if short := shortOf(h.stopErr); short != nil {
		r.takeLate(h, short)
	}
	r.report(h.read, true)
	return h, nil
}

// consume is the read loop of hold: it stops at r.want, when a silence
// ends it (silence.go), on the context or on a closed channel.
func (r reading) consume(ctx context.Context, h *held, closed <-chan *amqp.Error) {
	var (
		timer = time.NewTimer(firstMessageWait)
		ready []amqp.Delivery
	)
	defer timer.Stop()
	for h.read < r.want {
		select {
		case d := <-h.win.merged:
			ready = h.win.order(d, ready[:0])
			for _, d := range ready {
				if h.stopErr = r.take(h, d); h.stopErr != nil || h.read == r.want {
					return
				}
			}
			if h.win.due(h.read) {
				if h.stopErr = h.win.grow(); h.stopErr != nil {
					return
				}
			}
			gap := idleGap
			if r.stream && h.read >= r.expected {
				gap = streamTailGap
			}
			timer.Reset(gap)
			r.owed.heard()
		case <-h.win.gone:
			if len(h.win.merged) == 0 {
				h.stopErr = nameUnreadable(closeCause(closed), r.queue) // see quarantine.go
				return
			}
		case <-timer.C:
			if r.stream {
				return // the end of the stream
			}
			if err := r.owed.afterSilence(ctx, h.win); err != nil {
				if !errors.Is(err, errDone) {
					h.stopErr = err
				}
				return
			}
			timer.Reset(idleGap)
		case <-ctx.Done():
			h.stopErr = ctx.Err()
			return
		}
	}
}

// take records one delivery, in queue order.
func (r reading) take(h *held, d amqp.Delivery) error {
	m := toMessage(d, r.queue, h.read)
	h.read++
	h.lastTag = d.DeliveryTag
	if r.each != nil {
		if err := r.each(m); err != nil {
			return err
		}
		if r.tags {
			h.tags = append(h.tags, d.DeliveryTag)
		}
	} else {
		h.msgs = append(h.msgs, m)
		h.tags = append(h.tags, d.DeliveryTag)
	}
	if r.stream && h.read%max(r.prefetch()/2, 1) == 0 {
		if err := h.ch.Ack(h.lastTag, true); err != nil {
			return err
		}
	}
	r.report(h.read, false)
	return nil
}

// release cancels the consumers first (a message requeued to a live consumer
// comes straight back, and a quorum queue counts it twice), takes in what the
// broker pushed before the cancel-ok, then requeues everything in one Nack
// (verified on 3.10.8, 4.0.5 and 4.3.6: tag 0 with multiple releases all).
func (r reading) release(h *held) error {
	if err := h.stopConsuming(); err != nil {
		return err
	}
	if r.stream || h.lastTag == 0 {
		return nil
	}
	// Tag 0 with multiple is every outstanding delivery, stragglers the
	// drain gave up on included: none is left for the close to requeue,
	// which would count on a 4.3 quorum queue.
	if err := h.win.requeue(0, nil); err != nil {
		return fmt.Errorf("requeue: %w", err)
	}
	return nil
}

// stopConsuming cancels the consumers and drains what the broker pushed
// before the cancel-oks, raising lastTag to cover it, so that one Nack up to
// lastTag settles every delivery of the channel.
func (h *held) stopConsuming() error {
	_, err := h.cancel()
	return err
}

// cancel is stopConsuming returning what came in after the read stopped,
// in delivery-tag order; once cancelled, it returns nothing more.
func (h *held) cancel() ([]amqp.Delivery, error) {
	if h.stopped {
		return nil, nil
	}
	h.stopped = true
	timeout := make(chan struct{})
	t := time.AfterFunc(releaseWait, func() { close(timeout) })
	defer t.Stop()
	late, err := h.win.cancel(timeout)
	h.lastTag = max(h.lastTag, h.win.maxTag)
	return late, err
}

// takeLate ends a read that stopped short (another consumer has the rest):
// a message still on its way to this read when it stopped arrives before
// the broker's cancel-ok, and is this read's, not the other consumer's.
func (r reading) takeLate(h *held, short *shortRead) {
	seen := len(h.win.pending) // received already, waiting for an earlier tag
	late, err := h.cancel()
	if err != nil {
		h.stopErr = err
		return
	}
	short.n -= len(late) - seen
	for _, d := range late {
		if d.DeliveryTag < h.win.next || h.read == r.want {
			continue // taken already, or past what the read wants (released)
		}
		if err := r.take(h, d); err != nil {
			h.stopErr = err
			return
		}
	}
	if short.n <= 0 || h.read == r.want {
		h.stopErr = nil // all owed came in after all
	}
}

// closeCause says why the deliveries stopped: the broker's reason when it
// closed the channel or connection.
func closeCause(closed <-chan *amqp.Error) error {
	select {
	case e, ok := <-closed:
		if ok && e != nil {
			return e
		}
	case <-time.After(100 * time.Millisecond):
	}
	return errors.New("channel closed")
}

func consumerTag() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "dlqt-browse-" + hex.EncodeToString(b[:])
}

// toMessage keeps d's body, not a copy: amqp091-go gives every delivery a
// body of its own and nothing writes to one. The copy it made was one more
// body in memory on every read and every replay hold (a 128 MiB message
// held twice over while its hold sorted it).
func toMessage(d amqp.Delivery, queue string, pos int) triage.Message {
	m := triage.Message{
		Queue:       queue,
		Position:    pos,
		Redelivered: d.Redelivered,
		Exchange:    d.Exchange,
		RoutingKey:  d.RoutingKey,
		Properties: triage.Properties{
			MessageID:       d.MessageId,
			CorrelationID:   d.CorrelationId,
			ContentType:     d.ContentType,
			ContentEncoding: d.ContentEncoding,
			Type:            d.Type,
			AppID:           d.AppId,
			UserID:          d.UserId,
			ReplyTo:         d.ReplyTo,
			Expiration:      d.Expiration,
			Priority:        d.Priority,
			DeliveryMode:    d.DeliveryMode,
		},
		Headers: tableToHeaders(d.Headers),
		Body:    d.Body,
	}
	if !d.Timestamp.IsZero() {
		m.Properties.Timestamp = d.Timestamp.UTC()
	}
	return m
}
