package demo

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The AMQP plumbing the scenario flows share: confirmed publishing, manual-ack
// consumers, and depth polling through passive declares (the management API's
// counters lag by its stats interval, seconds; a passive declare is exact).

const pollEvery = 20 * time.Millisecond

type confirmPublisher struct {
	ch      *amqp.Channel
	returns chan amqp.Return
}

func newPublisher(conn *amqp.Connection) (*confirmPublisher, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	if err := ch.Confirm(false); err != nil {
		ch.Close()
		return nil, err
	}
	// Returns arrive before the confirm; the buffer keeps the reader from
	// blocking on them.
	returns := ch.NotifyReturn(make(chan amqp.Return, 32))
	return &confirmPublisher{ch: ch, returns: returns}, nil
}

func (p *confirmPublisher) close() { p.ch.Close() }

// publish sends msg as mandatory and waits for the broker's confirm, so a
// message that routes nowhere is an error rather than a silent loss.
func (p *confirmPublisher) publish(ctx context.Context, exchange, key string, msg amqp.Publishing) error {
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, true, false, msg)
	if err != nil {
		return fmt.Errorf("publish %s to %q/%q: %w", msg.MessageId, exchange, key, err)
	}
	acked, err := dc.WaitContext(ctx)
	if err != nil {
		return fmt.Errorf("confirm of %s: %w", msg.MessageId, err)
	}
	if !acked {
		return fmt.Errorf("broker nacked %s published to %q/%q", msg.MessageId, exchange, key)
	}
	select {
	case r := <-p.returns:
		return fmt.Errorf("message %s returned by %q/%q: %s", r.MessageId, r.Exchange, r.RoutingKey, r.ReplyText)
	default:
		return nil
	}
}

// scenarioConsumer is a manual-ack consumer on a channel of its own.
type scenarioConsumer struct {
	ch         *amqp.Channel
	tag        string
	deliveries <-chan amqp.Delivery
}

func consume(conn *amqp.Connection, queue string) (*scenarioConsumer, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	if err := ch.Qos(16, 0, false); err != nil {
		ch.Close()
		return nil, err
	}
	tag := "dlqt-scenario-" + queue
	ds, err := ch.Consume(queue, tag, false, false, false, false, nil)
	if err != nil {
		ch.Close()
		return nil, fmt.Errorf("consume %s: %w", queue, err)
	}
	return &scenarioConsumer{ch: ch, tag: tag, deliveries: ds}, nil
}

// stop cancels the consumer (the broker confirms with cancel-ok, so it is
// gone when this returns) and closes its channel.
func (c *scenarioConsumer) stop() {
	_ = c.ch.Cancel(c.tag, false)
	c.ch.Close()
}

// next waits for one delivery.
func (c *scenarioConsumer) next(ctx context.Context) (amqp.Delivery, error) {
	select {
	case d, ok := <-c.deliveries:
		if !ok {
			return amqp.Delivery{}, fmt.Errorf("consumer %s closed early", c.tag)
		}
		return d, nil
	case <-ctx.Done():
		return amqp.Delivery{}, ctx.Err()
	}
}

// depthProbe reads queue depths with passive declares on a channel of its
// own; it is not safe for concurrent use.
type depthProbe struct{ ch *amqp.Channel }

func newDepthProbe(conn *amqp.Connection) (*depthProbe, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	return &depthProbe{ch: ch}, nil
}

func (p *depthProbe) close() { p.ch.Close() }

func (p *depthProbe) depth(queue string) (messages, consumers int, err error) {
	q, err := p.ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("depth of %s: %w", queue, err)
	}
	return q.Messages, q.Consumers, nil
}

func (p *depthProbe) all(queues []string) (map[string]int, error) {
	ds := make(map[string]int, len(queues))
	for _, q := range queues {
		n, _, err := p.depth(q)
		if err != nil {
			return nil, err
		}
		ds[q] = n
	}
	return ds, nil
}

// waitDepth polls until queue holds exactly want ready messages.
func (p *depthProbe) waitDepth(ctx context.Context, queue string, want int) error {
	for {
		n, _, err := p.depth(queue)
		if err != nil {
			return err
		}
		if n == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s holds %d messages, want %d: %w", queue, n, want, ctx.Err())
		case <-time.After(pollEvery):
		}
	}
}

// settle polls until every queue of want holds its depth and has no
// consumer, and returns the depths observed.
func (p *depthProbe) settle(ctx context.Context, want map[string]int) (map[string]int, error) {
	queues := slices.Sorted(maps.Keys(want))
	for {
		got := make(map[string]int, len(want))
		var off []string
		for _, q := range queues {
			n, consumers, err := p.depth(q)
			if err != nil {
				return nil, err
			}
			got[q] = n
			if n != want[q] || consumers != 0 {
				off = append(off, fmt.Sprintf("%s: %d messages (want %d), %d consumers", q, n, want[q], consumers))
			}
		}
		if len(off) == 0 {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: %w", strings.Join(off, "; "), ctx.Err())
		case <-time.After(pollEvery):
		}
	}
}
