package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// Retention bounds what the audit stream keeps (x-max-age, e.g. "400D";
// x-max-length-bytes); zero values leave the broker's defaults.
type Retention struct {
	MaxAge   string
	MaxBytes int64
}

// AuditStream is the team's audit stream of a vhost (package trail), open
// for writing: a publisher-confirm channel on a connection of its own, so
// a browse or a hold on the reader's connection never waits behind it.
type AuditStream struct {
	live *Live
	name string

	mu       sync.Mutex
	conn     *amqp.Connection
	ch       *amqp.Channel
	closed   chan *amqp.Error
	returned chan amqp.Return
}

// confirmWait bounds the wait for the stream's confirm of one entry; an
// entry not confirmed by then is not written, and its action does not start.
const confirmWait = 15 * time.Second

// OpenAuditStream declares the stream name in the vhost if it is missing
// (x-queue-type stream, with ret) and opens it for writing. A queue of that
// name that is not a stream is refused: its entries could be taken out.
func (l *Live) OpenAuditStream(ctx context.Context, name string, ret Retention) (*AuditStream, error) {
	q, _, err := l.queueInfo(ctx, name)
	switch {
	case errors.Is(err, triage.ErrNotFound):
		if err := l.declareStream(ctx, name, ret); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("audit stream %q: %w", name, err)
	case q.Type != triage.QueueStream:
		return nil, fmt.Errorf("audit stream %q: vhost %q has a %s queue of that name, not a stream: its entries could be taken out, so dlqt does not write its trail there", name, l.cfg.Vhost, q.Type)
	}
	s := &AuditStream{live: l, name: name}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (l *Live) declareStream(ctx context.Context, name string, ret Retention) error {
	conn, err := l.connection(ctx)
	if err != nil {
		return err
	}
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("audit stream %q: open channel: %w", name, err)
	}
	defer ch.Close()
	args := amqp.Table{"x-queue-type": "stream"}
	if ret.MaxAge != "" {
		args["x-max-age"] = ret.MaxAge
	}
	if ret.MaxBytes > 0 {
		args["x-max-length-bytes"] = ret.MaxBytes
	}
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		return fmt.Errorf("audit stream %q cannot be created in vhost %q: %w", name, l.cfg.Vhost, readable(err))
	}
	return nil
}

// readable is an AMQP error as one line: ACCESS_REFUSED - … names the
// permission that is missing.
func readable(err error) error {
	var ae *amqp.Error
	if errors.As(err, &ae) {
		return errors.New(ae.Reason)
	}
	return err
}

// ErrNotSent is wrapped by Write's error when the record never left this
// process (no channel to the stream could be opened): no copy of it can be
// on the stream. Any other error of Write may leave one there unconfirmed.
var ErrNotSent = errors.New("the record was not sent")

// notSent is an error that is also ErrNotSent, with the text of the error
// alone.
type notSent struct{ error }

func (e notSent) Unwrap() []error { return []error{e.error, ErrNotSent} }

// open (re)opens the writing channel; s.mu is held.
func (s *AuditStream) open(ctx context.Context) error {
	if s.conn == nil || s.conn.IsClosed() {
		conn, err := s.live.nodes.dial(ctx, "dlqt audit trail", false)
		if err != nil {
			return fmt.Errorf("audit stream %q: %w", s.name, err)
		}
		s.conn = conn
	}
	ch, err := s.conn.Channel()
	if err != nil {
		return fmt.Errorf("audit stream %q: open channel: %w", s.name, err)
	}
	if err := ch.Confirm(false); err != nil {
		ch.Close()
		return fmt.Errorf("audit stream %q: confirms: %w", s.name, err)
	}
	s.ch = ch
	s.closed = ch.NotifyClose(make(chan *amqp.Error, 1))
	s.returned = ch.NotifyReturn(make(chan amqp.Return, 1))
	return nil
}

// Write publishes one record's body and waits until the stream confirmed
// it. A record the broker could not route (the stream was deleted), nacked
// or did not confirm in confirmWait is an error: nothing may be taken as
// on the trail that is not.
func (s *AuditStream) Write(ctx context.Context, body []byte, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dc, err := s.publishConfirmed(ctx, s.name, true, "the entry", amqp.Publishing{
		MessageId: id, ContentType: "application/json", DeliveryMode: amqp.Persistent, Timestamp: time.Now().UTC(), Body: body,
	})
	if err != nil {
		return err
	}
	select {
	case r := <-s.returned: // a return comes before its ack
		return fmt.Errorf("audit stream %q: the broker routed the entry nowhere (%s): was the stream deleted?", s.name, r.ReplyText)
	default:
	}
	if !dc.Acked() {
		return fmt.Errorf("audit stream %q refused the entry (nack)", s.name)
	}
	return nil
}

// Probe says whether records could be written now, without writing one: it
// publishes an empty message through the default exchange, as Write does,
// to a routing key no queue can have (a client cannot declare a queue
// named amq.*), and waits for its confirm. The broker checks write on
// amq.default before it routes, so a user who may not write the trail is
// refused here, and the unroutable message is dropped, never stored.
func (s *AuditStream) Probe(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	dc, err := s.publishConfirmed(ctx, "amq.dlqt-trail-probe."+hex.EncodeToString(nonce[:]), false, "a probe", amqp.Publishing{})
	if err != nil {
		return err
	}
	if !dc.Acked() {
		return fmt.Errorf("audit stream %q: the broker refused a probe (nack)", s.name)
	}
	return nil
}

// publishConfirmed publishes p through the default exchange to key,
// (re)opening the channel first, and waits up to confirmWait for the
// broker's answer; what names p in errors. An error wraps ErrNotSent when
// no channel could be opened. s.mu is held.
func (s *AuditStream) publishConfirmed(ctx context.Context, key string, mandatory bool, what string, p amqp.Publishing) (*amqp.DeferredConfirmation, error) {
	if s.ch == nil || s.ch.IsClosed() {
		if err := s.open(ctx); err != nil {
			return nil, notSent{err}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, confirmWait)
	defer cancel()
	dc, err := s.ch.PublishWithDeferredConfirmWithContext(ctx, "", key, mandatory, false, p)
	if err != nil {
		return nil, fmt.Errorf("audit stream %q: %w", s.name, readable(err))
	}
	select {
	case <-dc.Done():
		return dc, nil
	case e := <-s.closed:
		s.ch = nil
		if e == nil {
			return nil, fmt.Errorf("audit stream %q: the channel closed before %s was confirmed", s.name, what)
		}
		return nil, fmt.Errorf("audit stream %q cannot be written: %s", s.name, e.Reason)
	case <-ctx.Done():
		s.ch.Close()
		s.ch = nil
		return nil, fmt.Errorf("audit stream %q did not confirm %s in %s", s.name, what, confirmWait)
	}
}

// Close closes the stream's connection.
func (s *AuditStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil || s.conn.IsClosed() {
		return nil
	}
	return closeConn(s.conn)
}

// ReadAuditStream reads the stream name from its first offset to its end
// (a consumer with x-stream-offset first, manual acks, a bounded prefetch:
// Browse of a stream) and hands each message's body and offset to each.
func (l *Live) ReadAuditStream(ctx context.Context, name string, each func(offset int64, body []byte) error) (int, error) {
	q, _, err := l.queueInfo(ctx, name)
	if err != nil {
		return 0, fmt.Errorf("audit stream %q: %w", name, err)
	}
	if q.Type != triage.QueueStream {
		return 0, fmt.Errorf("audit stream %q: vhost %q has a %s queue of that name, not a stream", name, l.cfg.Vhost, q.Type)
	}
	n := 0
	_, err = l.Browse(ctx, name, triage.BrowseOptions{Limit: math.MaxInt32, Each: func(m triage.Message) error {
		n++
		offset := int64(-1)
		switch v := m.Headers["x-stream-offset"].(type) {
		case int64:
			offset = v
		case int32:
			offset = int64(v)
		}
		return each(offset, m.Body)
	}})
	return n, err
}
