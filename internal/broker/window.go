package broker

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
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
// order by tag. One Nack(0, multiple, requeue) still releases them all
// (on a quorum queue, one a consumer: see requeue).
type window struct {
	ch      *amqp.Channel
	queue   string
	args    amqp.Table
	size    int // prefetch of the newest consumer
	want    int // credit to grant in all
	granted int
	tags    []string      // consumer tags
	name    func() string // the tag of the next consumer

	merged   chan amqp.Delivery
	gone     chan struct{} // closed when every consumer's deliveries ended
	done     chan struct{} // closed by stop: forwarders give up
	live     atomic.Int32
	once     sync.Once // closes done
	goneOnce sync.Once

	next    uint64 // the delivery tag due next
	pending map[uint64]amqp.Delivery
	maxTag  uint64 // the highest delivery tag received

	// ahead, when set, is what in bytes the messages a window lets the
	// broker push may take: each new consumer's credit is worked out again
	// from what the deliveries read so far cost (seen of them, seenBytes in
	// all: deliveryCost), so the window follows the queue's real messages,
	// headers included, not the management API's figures, which lag by
	// seconds (0 for a queue RabbitMQ 4.x declared a moment ago) and count
	// bodies only.
	ahead           int64
	seen, seenBytes int64

	// serial, on a quorum queue, starts the next consumer only once every
	// earlier one has had all its credit: a quorum queue gives a Nack
	// (multiple, requeue) back consumer by consumer, so consumers fed at
	// the same time would go back in another order than the queue's
	// (TestAStreamedBrowseOfAQuorumQueueKeepsItsOrder). A classic queue
	// puts each message back at its place, whatever the consumer.
	serial bool
	bounds []uint64 // on a serial window, the last tag of each consumer but the newest
}

func newWindow(ch *amqp.Channel, queue string, args amqp.Table, size, want int) *window {
	size = max(1, min(size, want, math.MaxUint16))
	return &window{
		ch: ch, queue: queue, args: args, size: size, want: want,
		merged: make(chan amqp.Delivery, 64), gone: make(chan struct{}), done: make(chan struct{}),
		next: 1, pending: map[uint64]amqp.Delivery{}, name: consumerTag,
	}
}

// deliveryOverhead is what a delivery is taken to cost in the client
// beside its body before any was read: headers, properties and the
// client's bookkeeping.
const deliveryOverhead = 1024

// deliveryBase is what every delivery costs in the client beside its body
// and headers: the Delivery and its properties.
const deliveryBase = 512

// deliveryCost is about what d takes in the client's memory: its body, its
// headers as decoded (a dead letter's x-death tables cost more than a
// kilobyte) and deliveryBase.
func deliveryCost(d amqp.Delivery) int64 {
	return int64(len(d.Body)) + tableCost(d.Headers) + deliveryBase
}

// tableCost is about what a decoded field table takes: per entry a map
// slot (key and interface, about 48 bytes), the key and the value.
func tableCost(t amqp.Table) int64 {
	if t == nil {
		return 0
	}
	n := int64(48)
	for k, v := range t {
		n += 48 + int64(len(k)) + valueCost(v)
	}
	return n
}

func valueCost(v any) int64 {
	switch v := v.(type) {
	case string:
		return 16 + int64(len(v))
	case []byte:
		return 24 + int64(len(v))
	case amqp.Table:
		return tableCost(v)
	case []any:
		n := int64(24)
		for _, e := range v {
			n += 16 + valueCost(e)
		}
		return n
	}
	return 24 // numbers, booleans, times, decimals
}

// firstWindow is the most credit the first consumer gets: until deliveries
// were read, what they cost is a guess (the management API's statistics
// lag, count bodies only, and average), so the first window stays small
// and the next ones follow what was read.
const firstWindow = 64

// unknownFirstWindow is the first consumer's credit when the statistics
// give no size at all (a queue declared a moment ago, or not yet sampled):
// one message, whose cost sizes the next window. 64 messages of unknown
// size were 64 MiB of 1 MiB bodies pushed into the client against a
// 16 MiB budget.
const unknownFirstWindow = 1

// memoryWindow sizes the windows of a hold that keeps little of what it
// reads: ahead is a quarter of budget (DefaultMemoryBudget when <= 0), and
// first the first consumer's credit: firstWindow, or fewer when q's
// average body plus deliveryOverhead says so (huge messages).
func memoryWindow(budget int64, q triage.Queue) (first int, ahead int64) {
	if budget <= 0 {
		budget = triage.DefaultMemoryBudget
	}
	ahead = max(budget/4, 1)
	if q.Messages <= 0 || q.Bytes <= 0 {
		return unknownFirstWindow, ahead
	}
	avg := q.Bytes / int64(q.Messages)
	return min(firstWindow, windowCredit(ahead, avg+deliveryOverhead)), ahead
}

// windowCredit is how many messages of each bytes fit in ahead bytes,
// between 1 and the largest prefetch basic.qos takes.
func windowCredit(ahead, each int64) int {
	return int(max(1, min(ahead/max(each, 1), math.MaxUint16)))
}

// nextCredit is the credit of the next consumer: a window, sized again
// from the messages read so far when ahead is set, never past want.
func (w *window) nextCredit() int {
	if w.ahead > 0 && w.seen > 0 {
		w.size = windowCredit(w.ahead, w.seenBytes/w.seen)
	}
	return min(w.size, w.want-w.granted)
}

// grow starts one more consumer with the next window of credit.
func (w *window) grow() error {
	credit := w.nextCredit()
	if credit <= 0 {
		return nil
	}
	if w.serial && w.granted > 0 {
		// due waited for every earlier credit to be read: the consumers
		// so far had exactly tags 1..granted.
		w.bounds = append(w.bounds, uint64(w.granted))
	}
	if err := w.ch.Qos(credit, 0, false); err != nil {
		return fmt.Errorf("hold %q: set prefetch: %w", w.queue, err)
	}
	tag := w.name()
	// Counted live before the consume: when the connection dies while it
	// runs, the forwarders that end meanwhile must not find none left and
	// close gone before this one ends (seen as a close of a closed channel).
	w.live.Add(1)
	deliveries, err := w.ch.Consume(w.queue, tag, false, false, false, false, w.args)
	if err != nil {
		w.forwarderGone()
		return fmt.Errorf("hold %q: consume: %w", w.queue, err)
	}
	w.tags = append(w.tags, tag)
	w.granted += credit
	go w.forward(deliveries)
	return nil
}

// due says whether the reader, having taken read messages, should grow.
func (w *window) due(read int) bool {
	if w.serial {
		return w.granted < w.want && read >= w.granted
	}
	return w.granted < w.want && read >= w.granted-w.size/2
}

// forwarderGone counts one forwarder (or a consume that failed) out, and
// closes gone, once, when none is left.
func (w *window) forwarderGone() {
	if w.live.Add(-1) == 0 {
		w.goneOnce.Do(func() { close(w.gone) })
	}
}

func (w *window) forward(deliveries <-chan amqp.Delivery) {
	defer w.forwarderGone()
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
	w.seen++
	w.seenBytes += deliveryCost(d)
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
// or timeout closed. It returns the deliveries not yet handed out by order
// (those waiting for an earlier tag, and what came after the read stopped),
// in delivery-tag order; maxTag covers them all.
func (w *window) cancel(timeout <-chan struct{}) ([]amqp.Delivery, error) {
	defer w.stop()
	for _, tag := range w.tags {
		if err := w.ch.Cancel(tag, false); err != nil {
			return w.rest(), fmt.Errorf("cancel consumer: %w", err)
		}
	}
	for {
		select {
		case d := <-w.merged:
			w.keepLate(d)
		case <-w.gone:
			for {
				select {
				case d := <-w.merged:
					w.keepLate(d)
				default:
					return w.rest(), nil
				}
			}
		case <-timeout:
			return w.rest(), nil // the channel close requeues the rest
		}
	}
}

func (w *window) keepLate(d amqp.Delivery) {
	w.maxTag = max(w.maxTag, d.DeliveryTag)
	w.pending[d.DeliveryTag] = d
}

// rest empties pending, in delivery-tag order.
func (w *window) rest() []amqp.Delivery {
	out := make([]amqp.Delivery, 0, len(w.pending))
	for _, d := range w.pending {
		out = append(out, d)
	}
	clear(w.pending)
	slices.SortFunc(out, func(a, b amqp.Delivery) int { return cmp.Compare(a.DeliveryTag, b.DeliveryTag) })
	return out
}

// release gives back everything the channel holds on an error path:
// every consumer cancelled first (a requeue to a live one comes straight
// back), then one Nack of delivery tag 0 with multiple, which AMQP defines
// as every outstanding delivery. Errors are ignored: the close that
// follows requeues whatever this could not.
func (w *window) release() {
	defer w.stop()
	if w.ch.IsClosed() {
		return
	}
	for _, tag := range w.tags {
		_ = w.ch.Cancel(tag, false)
	}
	_ = w.requeue(0, nil)
}

// requeue gives back with Nack(multiple, requeue) every outstanding
// delivery up to tag last (0: every one). On a serial window it goes
// consumer by consumer, in their order, each up to the highest tag of its
// own that outstanding says is still unacked (nil: every delivery is),
// and waits for the queue to count what went back as ready before the
// next. A quorum queue puts what is returned ahead of the rest, in the
// order it applies the returns, and its client, once more than 32
// commands wait on the log, keeps the next ones by consumer and sends
// them in no set order. Measured on 3.10.8: one Nack over 42 consumers
// put 3,000 messages back in 5 runs out of order; a Nack a consumer
// without waiting still put the first 32 consumers' messages last, and
// after a sweep's acks, waiting every 16 did too
// (TestAStreamedBrowseOfAQuorumQueueKeepsItsOrder,
// TestASweepOfAQuorumQueueLeavesTheRestInOrder). The consumers must be
// cancelled before: the wait counts ready messages.
func (w *window) requeue(last uint64, outstanding func(tag uint64) bool) error {
	var (
		prev     uint64
		returned int // messages the nacks so far gave back
		base     = -1
	)
	for _, b := range w.bounds {
		if last != 0 && b >= last {
			break
		}
		top, n := uint64(0), 0
		for t := b; t > prev; t-- {
			if outstanding == nil || outstanding(t) {
				top = max(top, t)
				n++
			}
		}
		prev = b
		if top == 0 {
			continue
		}
		if base < 0 {
			base = w.ready()
		}
		if err := w.ch.Nack(top, true, true); err != nil {
			return err
		}
		if returned += n; base >= 0 {
			w.awaitReady(base + returned)
		}
	}
	return w.ch.Nack(last, true, true)
}

// requeueWait is the longest requeue waits for one consumer's returns:
// the queue's order is then left to the broker, nothing else is at stake.
const requeueWait = 2 * time.Second

// ready is the queue's ready count, -1 when it cannot be had.
func (w *window) ready() int {
	q, err := w.ch.QueueDeclarePassive(w.queue, false, false, false, false, nil)
	if err != nil {
		return -1
	}
	return q.Messages
}

// awaitReady waits until the queue counts at least n ready messages, at
// most requeueWait.
func (w *window) awaitReady(n int) {
	deadline := time.Now().Add(requeueWait)
	for {
		r := w.ready()
		if r < 0 || r >= n || time.Now().After(deadline) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stop lets the forwarders go once nobody reads the merged stream.
func (w *window) stop() { w.once.Do(func() { close(w.done) }) }
