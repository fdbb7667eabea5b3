package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// ScanHeader names the header every copy a full scan publishes carries:
// the id of that scan. A scan stops at its own copies, and a later scan
// tells an interrupted one's extra copies apart from only copies by it.
// The dlqt- prefix keeps it out of a message's identity (triage.BaseIDs).
const ScanHeader = triage.HeaderFullScan

// FullScanEffects is what a full scan does to the queue, for the user to
// read before consenting: it moves every message, it does not only look.
var FullScanEffects = []string{
	"every message is republished to the tail of the same queue, then its original is acked (after the broker confirms the copy)",
	"the scan stops after the number of messages the queue held when it started: the copies are not read again",
	"message ids, properties, headers and bodies are kept; the redelivered flag resets; each copy gets a " + ScanHeader + " header naming the scan",
	"dead letters arriving meanwhile land between the copies: the queue's order changes",
	"on a quorum queue the delivery count starts again: a full scan spends no deliveries",
	"the ids of each window are journaled before its copies are published; if dlqt stops midway, a message may be there twice, and the next full scan of the queue removes exactly those extra copies",
}

// NewScanID names one full scan; its copies carry it in ScanHeader.
func NewScanID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "fs-" + hex.EncodeToString(b[:])
}

// InterruptedScan is an earlier full scan of the queue that did not reach
// its end, as the journal has it.
type InterruptedScan struct {
	ScanID   string
	IDs      []string // base ids of every window it journaled before publishing
	Contents []string // their content hashes, in the same order
}

// ScanWindow is what the journal is told of a window before its copies
// are published: what a crash can leave twice.
type ScanWindow struct {
	Moving   []string // base ids of the messages to move
	Contents []string // their content hashes (what pairs a copy with its original)
	Removing []string // base ids of extra copies to remove
}

// FullScanOptions steer a full scan.
type FullScanOptions struct {
	// ScanID marks the copies; empty means a new one (NewScanID).
	ScanID string
	// Window is how many messages are in flight at once (prefetch and
	// unconfirmed copies); <= 0 means 256.
	Window int
	// Visit sees each original message, in queue order, before its copy is
	// published; an error stops the scan there (that message stays where
	// it was). An extra copy that is removed is not visited.
	Visit func(m triage.Message) error
	// InFlight is told of each window before any of its copies is
	// published; an error stops the scan before the window moves.
	InFlight func(ScanWindow) error
	// Interrupted are earlier scans of the queue that did not finish: a
	// copy of theirs whose original is in the queue too is removed, not
	// moved.
	Interrupted []InterruptedScan
	// Progress, when set, is called as messages are moved (done, total).
	Progress func(done, total int)
}

// FullScanResult is what a full scan did.
type FullScanResult struct {
	ScanID  string
	Total   int // ready messages when the scan started: what it set out to read
	Moved   int // copies confirmed and originals acked
	Removed int // extra copies of interrupted scans acked, not moved
	Final   int // ready messages once the scan had ended, -1 when it could not be read
}

// Whole reports whether the scan moved every message it found and the
// queue then held exactly those: no extra copy, none missing.
func (r FullScanResult) Whole() bool {
	return r.Moved+r.Removed == r.Total && r.Final == r.Moved
}

// FullScan reads the whole of a queue larger than any safe hold, a window
// at a time: each message is republished to the tail of the same queue
// with publisher confirms and its original acked only after the copy is
// confirmed, and the scan stops exactly after the count the queue held at
// its start. It consumes exclusively: a queue with another consumer is
// refused, since that consumer would take messages out from under it.
func (l *Live) FullScan(ctx context.Context, queue string, opts FullScanOptions) (FullScanResult, error) {
	l.released.forget(queue) // messages taken out: a count released before no longer holds (returning.go)
	if opts.Window <= 0 {
		opts.Window = 256
	}
	if opts.ScanID == "" {
		opts.ScanID = NewScanID()
	}
	conn, err := l.dial(ctx, "dlqt full scan")
	if err != nil {
		return FullScanResult{ScanID: opts.ScanID, Final: -1}, err
	}
	defer closeConn(conn)
	s, err := openScan(conn, queue, opts)
	if err != nil {
		return FullScanResult{ScanID: opts.ScanID, Final: -1}, err
	}
	defer s.close()
	err = s.run(ctx)
	return FullScanResult{ScanID: opts.ScanID, Total: s.total, Moved: s.moved, Removed: s.removed, Final: s.final}, err
}

// scan is one full scan in progress.
type scan struct {
	queue      string
	opts       FullScanOptions
	conn       *amqp.Connection
	read, pub  *amqp.Channel
	deliveries <-chan amqp.Delivery
	returns    chan amqp.Return // a copy the broker could not route (the queue went away)
	tag        string
	consuming  bool
	prefetch   int
	total      int
	taken      int    // originals delivered to the scan
	acked      int    // originals acked while consuming: each lets the broker deliver one more
	ackTo      uint64 // the last delivery released that may be acked now
	holdTo     uint64 // the last delivery released whose ack waits until the consumer stops
	ackedTo    uint64 // the last delivery acked (multiple)
	moved      int
	removed    int
	final      int
	extras     *extraCopies
}

// windowed is one message of a window: its delivery, whether it is an
// extra copy to remove, and the confirm of its copy.
type windowed struct {
	d       amqp.Delivery
	id      string
	content string
	extra   bool
	confirm *amqp.DeferredConfirmation
}

func openScan(conn *amqp.Connection, queue string, opts FullScanOptions) (*scan, error) {
	s := &scan{queue: queue, opts: opts, conn: conn, final: -1, tag: "dlqt-full-scan-" + consumerTag()[len("dlqt-browse-"):],
		extras: newExtraCopies(opts.Interrupted)}
	var err error
	if s.read, err = conn.Channel(); err != nil {
		return nil, fmt.Errorf("full scan: open channel: %w", err)
	}
	if s.pub, err = conn.Channel(); err != nil {
		return nil, fmt.Errorf("full scan: open channel: %w", err)
	}
	if err := s.pub.Confirm(false); err != nil {
		return nil, fmt.Errorf("full scan: confirm mode: %w", err)
	}
	// the broker sends a return before the confirm of the same copy, on
	// the channel's one dispatch loop: it is in the buffer when the
	// confirm is read
	s.returns = s.pub.NotifyReturn(make(chan amqp.Return, opts.Window+1))
	q, err := s.read.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		return nil, because(err, "full scan of %q: %v", queue, err)
	}
	if q.Consumers > 0 {
		return nil, fmt.Errorf("full scan of %q: it needs the queue to itself, and %d consumer(s) read it", queue, q.Consumers)
	}
	s.total = q.Messages
	if s.total == 0 {
		return s, nil
	}
	s.prefetch = min(opts.Window, s.total)
	if err := s.read.Qos(s.prefetch, 0, false); err != nil {
		return nil, fmt.Errorf("full scan: prefetch: %w", err)
	}
	if s.deliveries, err = s.read.Consume(queue, s.tag, false, true, false, false, nil); err != nil {
		return nil, because(err, "full scan of %q: it needs the queue to itself (no other consumer): %v", queue, err)
	}
	s.consuming = true
	return s, nil
}

// run moves total messages, a window at a time. The broker delivers at
// most acked+prefetch messages, so acking stops at total-prefetch while
// the consumer is on: it can then deliver every original and never a
// copy. Every original comes through the consumer; once the last one has,
// the consumer is cancelled and the held originals acked. (Reading the
// tail by basic.get after a cancel read copies: deliveries still on their
// way to the cancelled consumer are dropped by the client, and the gets
// took the copies behind them.) Each window is acked with one multiple
// ack: a quorum queue's channel keeps individual acks past 32 unapplied
// commands in a buffer that a channel close throws away, and the
// originals came back beside their copies (223 of a last window of 256).
func (s *scan) run(ctx context.Context) error {
	for s.taken < s.total {
		w, stop := s.nextWindow(ctx)
		if err := s.move(ctx, w); err != nil || stop != nil {
			return s.finish(errors.Join(stop, err))
		}
	}
	return s.finish(nil)
}

// nextWindow takes the next window of originals from the consumer and
// visits those it will move. On an error it returns the window read up to
// there (moved, then the scan stops): the message it stopped at stays
// where it was. A copy of this scan's own means the queue held fewer
// originals than counted: it stops there too.
func (s *scan) nextWindow(ctx context.Context) ([]windowed, error) {
	w := make([]windowed, 0, min(s.opts.Window, s.total-s.taken))
	for len(w) < cap(w) {
		d, err := s.next(ctx)
		if err != nil {
			return w, err
		}
		if mark(d) == s.opts.ScanID {
			return w, fmt.Errorf("full scan: reached its own copies after %d of %d messages: another client took some from the queue", s.taken, s.total)
		}
		m := toMessage(d, s.queue, s.taken)
		id, content := triage.BaseIDs([]triage.Message{m}, nil)[0], contentKey(m)
		extra := s.extras.extra(pairKey(id, content), mark(d), d.Redelivered)
		if !extra && s.opts.Visit != nil {
			if err := s.opts.Visit(m); err != nil {
				return w, err
			}
		}
		s.taken++
		w = append(w, windowed{d: d, id: id, content: content, extra: extra})
	}
	return w, nil
}

// next is the next original delivered to the consumer.
func (s *scan) next(ctx context.Context) (amqp.Delivery, error) {
	select {
	case d, ok := <-s.deliveries:
		if !ok {
			return d, errors.New("full scan: the broker closed the channel (the messages not acked are still in the queue)")
		}
		return d, nil
	case <-ctx.Done():
		return amqp.Delivery{}, ctx.Err()
	}
}

// move journals a window's ids, publishes its copies, waits for every
// confirm and only then releases the originals (and the extra copies).
func (s *scan) move(ctx context.Context, w []windowed) error {
	if len(w) == 0 {
		return nil
	}
	if err := s.journalWindow(w); err != nil {
		return err
	}
	var failed error
	for i := range w {
		if w[i].extra {
			continue
		}
		dc, err := s.pub.PublishWithDeferredConfirmWithContext(ctx, "", s.queue, true, false, copyOf(w[i].d, s.opts.ScanID))
		if err != nil { // what was published before it is still settled
			failed = fmt.Errorf("full scan: publish the copy of message %d: %w", s.taken-len(w)+i, err)
			w = w[:i]
			break
		}
		w[i].confirm = dc
	}
	for _, m := range w {
		if err := s.confirmed(m); err != nil {
			return errors.Join(failed, err)
		}
		s.release(m)
	}
	return errors.Join(failed, s.ackReleased(s.ackTo))
}

func (s *scan) journalWindow(w []windowed) error {
	if s.opts.InFlight == nil {
		return nil
	}
	var sw ScanWindow
	for _, m := range w {
		if m.extra {
			sw.Removing = append(sw.Removing, m.id)
		} else {
			sw.Moving, sw.Contents = append(sw.Moving, m.id), append(sw.Contents, m.content)
		}
	}
	return s.opts.InFlight(sw)
}

// confirmed waits for the broker's confirm of m's copy (an extra copy has
// none). It waits without the scan's context: a copy published is settled
// even when the scan was cancelled, so no confirmed copy leaves its
// original behind.
func (s *scan) confirmed(m windowed) error {
	if m.confirm == nil {
		return nil
	}
	acked, err := m.confirm.WaitContext(context.Background())
	if err != nil {
		return fmt.Errorf("full scan: waiting for the broker's confirm: %w", err)
	}
	if !acked {
		return errors.New("full scan: the broker refused a copy (or the connection ended); its original stays where it was")
	}
	select {
	case r, ok := <-s.returns:
		if ok {
			return fmt.Errorf("full scan: a copy came back unroutable (%s); its original stays where it was", r.ReplyText)
		}
	default:
	}
	return nil
}

// release marks m's original (its copy confirmed) to be acked, or held
// while an ack would let the consumer be sent a copy. Releases come in
// delivery order, so every delivery up to the last released one is acked
// by one multiple ack.
func (s *scan) release(m windowed) {
	if s.consuming && s.acked+1 > s.total-s.prefetch {
		s.holdTo = m.d.DeliveryTag
	} else {
		s.ackTo = m.d.DeliveryTag
		s.acked++
	}
	if m.extra {
		s.removed++
	} else {
		s.moved++
	}
	if s.opts.Progress != nil {
		s.opts.Progress(s.moved+s.removed, s.total)
	}
}

func (s *scan) ackReleased(upTo uint64) error {
	if upTo <= s.ackedTo {
		return nil
	}
	if err := s.read.Ack(upTo, true); err != nil {
		return fmt.Errorf("full scan: ack the originals: %w", err)
	}
	s.ackedTo = upTo
	return nil
}

// finish cancels the consumer, acks the held originals (their copies are
// confirmed) and reads the depth the scan leaves, keeping the first error.
func (s *scan) finish(cause error) error {
	if s.consuming {
		s.consuming = false
		if err := s.read.Cancel(s.tag, false); err != nil && cause == nil {
			cause = fmt.Errorf("full scan: stop consuming: %w", err)
		}
	}
	if err := s.ackReleased(max(s.ackTo, s.holdTo)); err != nil {
		return errors.Join(cause, err)
	}
	s.read.Close() // what was delivered and not moved goes back
	s.read = nil
	s.final = s.settledDepth()
	return cause
}

// settledDepth is the queue's ready count once two reads a moment apart
// agree: an ack the broker lost would put an original back, and "moved
// all" must not be said before that shows. -1 when it cannot be read.
func (s *scan) settledDepth() int {
	ch, err := s.conn.Channel()
	if err != nil {
		return -1
	}
	defer ch.Close()
	last := -1
	for range 20 {
		q, err := ch.QueueDeclarePassive(s.queue, false, false, false, false, nil)
		if err != nil {
			return -1
		}
		if q.Messages == last {
			return last
		}
		last = q.Messages
		time.Sleep(250 * time.Millisecond)
	}
	return last
}

func (s *scan) close() {
	if s.pub != nil {
		s.pub.Close()
	}
	if s.read != nil {
		s.read.Close() // what is still unacked goes back
	}
}

// mark is the scan id a message's copy was given, if any.
func mark(d amqp.Delivery) string {
	id, _ := d.Headers[ScanHeader].(string)
	return id
}

// copyOf is the publishing that puts d again at the tail of its queue,
// with everything the publisher and the broker gave it, marked as a copy
// of scan scanID.
func copyOf(d amqp.Delivery, scanID string) amqp.Publishing {
	headers := maps.Clone(d.Headers)
	if headers == nil {
		headers = amqp.Table{}
	}
	headers[ScanHeader] = scanID
	return amqp.Publishing{
		Headers:         headers,
		ContentType:     d.ContentType,
		ContentEncoding: d.ContentEncoding,
		DeliveryMode:    d.DeliveryMode,
		Priority:        d.Priority,
		CorrelationId:   d.CorrelationId,
		ReplyTo:         d.ReplyTo,
		Expiration:      d.Expiration,
		MessageId:       d.MessageId,
		Timestamp:       d.Timestamp,
		Type:            d.Type,
		UserId:          d.UserId,
		AppId:           d.AppId,
		Body:            d.Body,
	}
}
