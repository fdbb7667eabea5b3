package broker

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	amqp "github.com/rabbitmq/amqp091-go"
)

// window lets a hold keep any number of messages unacked without ever
// asking for an unlimited prefetch, and without the broker pushing the
// whole queue into the client before it is read. basic.qos takes a uint16
// and, with global false, applies to the consumers started after it
// (RabbitMQ's per-consumer prefetch). So a hold starts one consumer with a
// prefetch of one window, and adds the next consumer, with the next window,
// once half of the credit granted so far has been read: at most about one
// and a half windows are ever in flight beyond what the reader took, and the
// credit granted in all is exactly what the hold wants (RemoveAt and the
// quarantine rely on the broker pushing nothing past that).
//
// Every consumer is on the same channel, so delivery tags are one sequence
// in queue order; the deliveries of the consumers are merged back into that
// order by tag. One Nack(0, multiple, requeue) still releases them all.
type window struct {
	ch      *amqp.Channel
	queue   string
	args    amqp.Table
	size    int // prefetch of each consumer
	want    int // credit to grant in all
	granted int
	tags    []string // consumer tags

	merged chan amqp.Delivery
	gone   chan struct{} // closed when every consumer's deliveries ended
	done   chan struct{} // closed by stop: forwarders give up
	live   atomic.Int32
	once   sync.Once

	next    uint64 // the delivery tag due next
	pending map[uint64]amqp.Delivery
	maxTag  uint64 // the highest delivery tag received
}

func newWindow(ch *amqp.Channel, queue string, args amqp.Table, size, want int) *window {
	size = max(1, min(size, want, math.MaxUint16))
	return &window{
		ch: ch, queue: queue, args: args, size: size, want: want,
		merged: make(chan amqp.Delivery, 64), gone: make(chan struct{}), done: make(chan struct{}),
		next: 1, pending: map[uint64]amqp.Delivery{},
	}
}

// grow starts one more consumer with the next window of credit.
func (w *window) grow() error {
	credit := min(w.size, w.want-w.granted)
	if credit <= 0 {
		return nil
	}
	if err := w.ch.Qos(credit, 0, false); err != nil {
		return fmt.Errorf("browse %q: set prefetch: %w", w.queue, err)
	}
	tag := consumerTag()
	deliveries, err := w.ch.Consume(w.queue, tag, false, false, false, false, w.args)
	if err != nil {
		return fmt.Errorf("browse %q: consume: %w", w.queue, err)
	}
	w.tags = append(w.tags, tag)
	w.granted += credit
	w.live.Add(1)
	go w.forward(deliveries)
	return nil
}

// due says whether the reader, having taken read messages, should grow.
func (w *window) due(read int) bool {
	return w.granted < w.want && read >= w.granted-w.size/2
}

func (w *window) forward(deliveries <-chan amqp.Delivery) {
	defer func() {
		if w.live.Add(-1) == 0 {
			close(w.gone)
		}
	}()
	for d := range deliveries {
		select {
		case w.merged <- d:
		case <-w.done:
			return
		}
	}
}

// order takes one delivery off the merged stream and returns those now due,
// in delivery-tag order.
func (w *window) order(d amqp.Delivery, out []amqp.Delivery) []amqp.Delivery {
	w.maxTag = max(w.maxTag, d.DeliveryTag)
	if d.DeliveryTag != w.next {
		w.pending[d.DeliveryTag] = d
		return out
	}
	out = append(out, d)
	w.next++
	for {
		p, ok := w.pending[w.next]
		if !ok {
			return out
		}
		delete(w.pending, w.next)
		out = append(out, p)
		w.next++
	}
}

// cancel cancels every consumer (each waits for its cancel-ok) and takes
// in what the broker pushed before, until every consumer's deliveries ended
// or wait ran out. It returns the highest delivery tag seen.
func (w *window) cancel(timeout <-chan struct{}) (uint64, error) {
	defer w.stop()
	for _, tag := range w.tags {
		if err := w.ch.Cancel(tag, false); err != nil {
			return w.maxTag, fmt.Errorf("cancel consumer: %w", err)
		}
	}
	for {
		select {
		case d := <-w.merged:
			w.maxTag = max(w.maxTag, d.DeliveryTag)
		case <-w.gone:
			for {
				select {
				case d := <-w.merged:
					w.maxTag = max(w.maxTag, d.DeliveryTag)
				default:
					return w.maxTag, nil
				}
			}
		case <-timeout:
			return w.maxTag, nil // the channel close requeues the rest
		}
	}
}

// stop lets the forwarders go once nobody reads the merged stream.
func (w *window) stop() { w.once.Do(func() { close(w.done) }) }
