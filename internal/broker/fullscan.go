package broker

import (
	"context"
	"errors"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// FullScanEffects is what a full scan does to the queue, for the user to
// read before consenting: it moves every message, it does not only look.
var FullScanEffects = []string{
	"every message is republished to the tail of the same queue, then its original is acked (after the broker confirms the copy)",
	"the scan stops after the number of messages the queue held when it started: the copies are not read again",
	"message ids, properties, headers and bodies are kept; the redelivered flag resets",
	"dead letters arriving meanwhile land between the copies: the queue's order changes",
	"on a quorum queue the delivery count starts again: a full scan spends no deliveries",
	"if dlqt stops midway, every message is still in the queue once (a copy whose original was not acked yet may be there twice)",
}

// FullScanOptions steer a full scan.
type FullScanOptions struct {
	// Window is how many messages are in flight at once (prefetch and
	// unconfirmed copies); <= 0 means 256.
	Window int
	// Visit sees each original message, in queue order, before its copy is
	// published; an error stops the scan there (that message stays where
	// it was).
	Visit func(m triage.Message) error
	// Progress, when set, is called as messages are moved (done, total).
	Progress func(done, total int)
}

// FullScanResult is what a full scan did.
type FullScanResult struct {
	Total int // ready messages when the scan started: what it set out to move
	Moved int // copies confirmed and originals acked
}

// FullScan reads the whole of a queue larger than any safe hold, a window
// at a time: each message is republished to the tail of the same queue
// with publisher confirms and its original acked only after the copy is
// confirmed, and the scan stops exactly after the count the queue held at
// its start. It consumes exclusively: a queue with another consumer is
// refused, since that consumer would take messages out from under it.
func (l *Live) FullScan(ctx context.Context, queue string, opts FullScanOptions) (FullScanResult, error) {
	if opts.Window <= 0 {
		opts.Window = 256
	}
	conn, err := l.dial(ctx, "dlqt full scan")
	if err != nil {
		return FullScanResult{}, err
	}
	defer closeConn(conn)
	s, err := openScan(conn, queue, opts)
	if err != nil {
		return FullScanResult{}, err
	}
	defer s.close()
	err = s.run(ctx)
	return FullScanResult{Total: s.total, Moved: s.moved}, err
}

// scan is one full scan in progress.
type scan struct {
	queue      string
	opts       FullScanOptions
	read, pub  *amqp.Channel
	deliveries <-chan amqp.Delivery
	returns    chan amqp.Return // a copy the broker could not route (the queue went away)
	tag        string
	consuming  bool // the consumer is on; once cancelled, the rest is read by basic.get
	prefetch   int
	total      int
	moved      int
	pending    []inFlight // copies published, originals not yet acked, in order
}

// inFlight is a copy awaiting its confirm, and the original it replaces.
type inFlight struct {
	confirm  *amqp.DeferredConfirmation
	original uint64
}

func openScan(conn *amqp.Connection, queue string, opts FullScanOptions) (*scan, error) {
	s := &scan{queue: queue, opts: opts, tag: "dlqt-full-scan-" + consumerTag()[len("dlqt-browse-"):]}
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

// run moves total messages. The broker never delivers past the count: the
// consumer is cancelled before an ack could let the prefetch reach the
// copies (which would come back redelivered), and what is left is read by
// basic.get, one at a time.
func (s *scan) run(ctx context.Context) error {
	for read := 0; read < s.total; read++ {
		d, err := s.next(ctx)
		if err != nil {
			return s.settleAll(err)
		}
		if s.opts.Visit != nil {
			if err := s.opts.Visit(toMessage(d, s.queue, read)); err != nil {
				return s.settleAll(err)
			}
		}
		dc, err := s.pub.PublishWithDeferredConfirmWithContext(ctx, "", s.queue, true, false, copyOf(d))
		if err != nil {
			return s.settleAll(fmt.Errorf("full scan: publish the copy of message %d: %w", read, err))
		}
		s.pending = append(s.pending, inFlight{confirm: dc, original: d.DeliveryTag})
		if len(s.pending) >= s.opts.Window {
			if err := s.settle(ctx, 1); err != nil {
				return s.settleAll(err)
			}
		}
	}
	return s.settleAll(s.stopConsuming())
}

// next is the next original: delivered to the consumer, or, once it is
// cancelled and drained, got from the head of the queue.
func (s *scan) next(ctx context.Context) (amqp.Delivery, error) {
	if s.deliveries != nil {
		select {
		case d, ok := <-s.deliveries:
			if ok {
				return d, nil
			}
			if s.consuming {
				return d, errors.New("full scan: the broker closed the channel (the messages not acked are still in the queue)")
			}
			s.deliveries = nil
		case <-ctx.Done():
			return amqp.Delivery{}, ctx.Err()
		}
	}
	if err := ctx.Err(); err != nil {
		return amqp.Delivery{}, err
	}
	d, ok, err := s.read.Get(s.queue, false)
	if err != nil {
		return d, fmt.Errorf("full scan: read: %w", err)
	}
	if !ok {
		return d, errors.New("full scan: the queue holds fewer messages than when the scan started (another client took some)")
	}
	return d, nil
}

// stopConsuming cancels the consumer; what it was sent stays readable.
func (s *scan) stopConsuming() error {
	if !s.consuming {
		return nil
	}
	s.consuming = false
	if err := s.read.Cancel(s.tag, false); err != nil {
		return fmt.Errorf("full scan: stop consuming: %w", err)
	}
	return nil
}

// settle waits for the confirms of the n oldest copies and acks their
// originals; a nacked copy stops the scan with its original left in place.
func (s *scan) settle(ctx context.Context, n int) error {
	for ; n > 0 && len(s.pending) > 0; n-- {
		f := s.pending[0]
		acked, err := f.confirm.WaitContext(ctx)
		if err != nil {
			return fmt.Errorf("full scan: waiting for the broker's confirm: %w", err)
		}
		if !acked {
			return errors.New("full scan: the broker refused a copy; its original stays where it was")
		}
		if s.consuming && s.moved+1+s.prefetch > s.total {
			if err := s.stopConsuming(); err != nil { // before the ack that would let a copy through
				return err
			}
		}
		select {
		case r, ok := <-s.returns:
			if ok {
				return fmt.Errorf("full scan: a copy came back unroutable (%s); its original stays where it was", r.ReplyText)
			}
		default:
		}
		if err := s.read.Ack(f.original, false); err != nil {
			return fmt.Errorf("full scan: ack an original: %w", err)
		}
		s.pending, s.moved = s.pending[1:], s.moved+1
		if s.opts.Progress != nil {
			s.opts.Progress(s.moved, s.total)
		}
	}
	return nil
}

// settleAll settles every copy in flight (so no confirmed copy leaves its
// original behind), keeping the first error.
func (s *scan) settleAll(cause error) error {
	ctx := context.Background() // settle what was published even when ctx ended
	if err := s.settle(ctx, len(s.pending)); cause == nil {
		cause = err
	}
	return cause
}

func (s *scan) close() {
	if s.pub != nil {
		s.pub.Close()
	}
	if s.read != nil {
		s.read.Close() // what is still unacked (copies delivered past the count) goes back
	}
}

// copyOf is the publishing that puts d again at the tail of its queue,
// with everything the publisher and the broker gave it.
func copyOf(d amqp.Delivery) amqp.Publishing {
	return amqp.Publishing{
		Headers:         d.Headers,
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
