package broker

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// heldSources are the source messages a replay holds unacked on its hold
// connection, by item id.
type heldSources struct {
	mu     sync.Mutex
	ch     *amqp.Channel
	tags   map[string]uint64
	tables map[string]amqp.Table // headers as delivered, for republishing

	// On a quorum queue the hold's consumer stays up while it holds (see
	// keepConsuming): spare are the deliveries it keeps that were not
	// selected, consumer its tag until it is cancelled, and reading closes
	// when its deliveries end.
	spare    []uint64
	consumer string
	reading  chan struct{}
}

// Hold implements replay.Port. It consumes the queue with manual ack
// and a prefetch of what it means to read (never a basic.get loop;
// docs/ARCHITECTURE.md), cancels the
// consumer once it has read the depth it found, at most HoldLimit (or the
// broker goes quiet),
// and keeps the wanted messages unacked; every other one is requeued on its
// own, back to its place. Identities are computed as the read path does
// (triage.Identify), over the messages that are not copies of this replay,
// so a failed-again copy neither gets held nor shifts an occurrence index.
//
// The held messages stay unacked until Ack, Requeue or Close; a replay that
// outlives the broker's consumer timeout (30 min by default) loses its hold
// and the broker requeues them: nothing is lost, the replay stops.
func (r *Replay) Hold(ctx context.Context, queue string, ids []string, replayID string) ([]replay.HeldMessage, error) {
	if r.held != nil {
		return nil, fmt.Errorf("replay %s already holds its messages", r.replayID)
	}
	q, cost, err := r.live.queueInfo(ctx, queue)
	if err != nil {
		return nil, err
	}
	if q.Type == triage.QueueStream {
		return nil, fmt.Errorf("queue %q is a stream: its messages cannot be taken out, so a replay would only copy them", queue)
	}
	depth, err := passiveDepth(r.hold, queue, r.live.cfg.Vhost)
	if err != nil {
		return nil, err
	}
	if cost.AsksFirst() && !r.AcceptDeliveryCost {
		return nil, triage.NewDeliveryCostError(queue, cost, depth)
	}
	ch, err := r.hold.Channel()
	if err != nil {
		return nil, fmt.Errorf("replay: open hold channel: %w", err)
	}
	r.held = &heldSources{ch: ch, tags: map[string]uint64{}, tables: map[string]amqp.Table{}}
	r.watchClose(ch.NotifyClose(make(chan *amqp.Error, 1)), "hold channel")
	if depth == 0 || len(ids) == 0 {
		return nil, nil
	}
	limit := r.HoldLimit
	if limit <= 0 {
		limit = triage.DefaultBrowseLimit
	}
	want := min(depth, limit)
	if err := ch.Qos(holdPrefetch(want), 0, false); err != nil {
		return nil, fmt.Errorf("replay: hold %q: %w", queue, err)
	}
	quorum := q.Type == triage.QueueQuorum
	pass := newPassing(queue, ids, replayID)
	ds, deliveries, err := r.consumeAll(ctx, ch, queue, want, !quorum, pass.keep)
	if err != nil {
		releaseAll(ch, r.consumerTag())
		ch.Close()
		return nil, err
	}

	out, put := r.sortHeld(ds, pass.bases, queue, ids, replayID)
	if quorum {
		r.keepConsuming(put, deliveries)
		return out, nil
	}
	for _, tag := range put {
		if err := ch.Nack(tag, false, true); err != nil {
			releaseAll(ch, r.consumerTag())
			ch.Close()
			return nil, fmt.Errorf("replay: put back the messages not selected: %w", err)
		}
	}
	return out, nil
}

// holdPrefetch is the prefetch of a hold of want messages, all kept
// unacked: exactly want. Unlimited (0) is not: a quorum queue gives such a
// consumer a credit of 2,000 only, and a larger hold would stall there.
// Above what basic.qos takes, 0 is the best there is.
func holdPrefetch(want int) int {
	if want > maxHoldPrefetch {
		return 0
	}
	return max(want, 1)
}

// sortHeld splits what a hold read into the messages to keep (the selected
// ids, recorded in r.held, and this replay's own copies, reported as such)
// and the delivery tags to put back. bases are the base identities of ds
// (passing.keep), "" for the copies.
func (r *Replay) sortHeld(ds []amqp.Delivery, bases []string, queue string, ids []string, replayID string) (out []replay.HeldMessage, put []uint64) {
	var own []amqp.Delivery // not copies of this replay
	var ownBases []string
	for i, d := range ds {
		if id, _ := d.Headers[triage.HeaderReplayID].(string); id == replayID {
			put = append(put, d.DeliveryTag)
			item, _ := d.Headers[triage.HeaderReplayItem].(string)
			out = append(out, replay.HeldMessage{ID: item, Message: toMessage(d, queue, -1), Copy: true})
			continue
		}
		own, ownBases = append(own, d), append(ownBases, bases[i])
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	for i, id := range triage.SuffixIDs(ownBases) {
		if want[id] {
			out = append(out, replay.HeldMessage{ID: id, Message: toMessage(own[i], queue, i)})
			r.held.tags[id] = own[i].DeliveryTag
			r.held.tables[id] = own[i].Headers
			continue
		}
		put = append(put, own[i].DeliveryTag)
	}
	return out, put
}

// passing keeps of each delivery a hold reads only what the replay may
// need: the whole delivery when it is a copy of this replay or its
// identity may be one of the selected, else its tag and base identity
// alone. A hold of a large queue so keeps the bodies of what it replays,
// not of the whole queue.
type passing struct {
	queue, replayID string
	maybe           map[string]bool // base ids a selected id may have
	bases           []string        // base id of each delivery kept, "" for a copy
}

func newPassing(queue string, ids []string, replayID string) *passing {
	p := &passing{queue: queue, replayID: replayID, maybe: make(map[string]bool, len(ids))}
	for _, id := range ids {
		p.maybe[id] = true
		if i := strings.LastIndexByte(id, '#'); i > 0 {
			if _, err := strconv.Atoi(id[i+1:]); err == nil {
				p.maybe[id[:i]] = true // an occurrence suffix (SuffixIDs)
			}
		}
	}
	return p
}

func (p *passing) keep(d amqp.Delivery) amqp.Delivery {
	if id, _ := d.Headers[triage.HeaderReplayID].(string); id == p.replayID {
		p.bases = append(p.bases, "")
		return d
	}
	m := toMessage(d, p.queue, 0)
	base := triage.BaseIDs([]triage.Message{m}, []triage.Envelope{triage.DecodeEnvelope(d.Body)})[0]
	p.bases = append(p.bases, base)
	if !p.maybe[base] {
		d.Body, d.Headers = nil, nil // never selected: the tag is all it needs
	}
	return d
}

// deliveredTable is the header table to publish for held item id: each
// header the replay did not change goes out exactly as it was delivered
// (int8 stays int8, a decimal stays a decimal, nested tables and arrays
// alike); what the replay added or changed goes out as headersToTable
// makes it.
func (r *Replay) deliveredTable(id string, h triage.Headers) amqp.Table {
	var delivered amqp.Table
	if r.held != nil {
		r.held.mu.Lock()
		delivered = r.held.tables[id]
		r.held.mu.Unlock()
	}
	t := headersToTable(h)
	for k, v := range delivered {
		if want, ok := h[k]; ok && reflect.DeepEqual(fieldToValue(v), want) {
			t[k] = v
		}
	}
	return t
}

// consumeAll takes up to depth deliveries, then, with cancel, cancels the
// consumer and takes in what the broker pushed before the cancel-ok;
// without, it leaves the consumer up and returns its deliveries.
func (r *Replay) consumeAll(ctx context.Context, ch *amqp.Channel, queue string, depth int, cancel bool, keep func(amqp.Delivery) amqp.Delivery) ([]amqp.Delivery, <-chan amqp.Delivery, error) {
	tag := r.consumerTag()
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	deliveries, err := ch.Consume(queue, tag, false, false, false, false, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: hold %q: %w", queue, err)
	}
	var ds []amqp.Delivery
	timer := time.NewTimer(firstMessageWait)
	defer timer.Stop()
	lastHeard := time.Now()
read:
	for len(ds) < depth {
		select {
		case d, ok := <-deliveries:
			if !ok {
				// A message whose headers the client cannot decode drops the
				// connection: name it (see quarantine.go).
				return nil, nil, nameUnreadable(fmt.Errorf("replay: hold %q: the channel closed: %w", queue, closeCause(closed)), queue)
			}
			ds = append(ds, keep(d))
			timer.Reset(idleGap)
			lastHeard = time.Now()
		case <-timer.C:
			ready, err := passiveDepth(r.hold, queue, "")
			if err != nil || ready == 0 {
				break read // the rest is held by other consumers, or gone
			}
			if time.Since(lastHeard) > maxStall {
				return nil, nil, fmt.Errorf("replay: hold %q: the broker sent nothing for %s while %d messages were ready", queue, maxStall, ready)
			}
			timer.Reset(idleGap)
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	if !cancel {
		return ds, deliveries, nil
	}
	if err := ch.Cancel(tag, false); err != nil {
		return nil, nil, fmt.Errorf("replay: hold %q: cancel: %w", queue, err)
	}
	for _, d := range drainDeliveries(deliveries) {
		ds = append(ds, keep(d))
	}
	return ds, nil, nil
}

// drainDeliveries takes in what a cancelled consumer's broker pushed
// before the cancel-ok, at most releaseWait.
func drainDeliveries(deliveries <-chan amqp.Delivery) []amqp.Delivery {
	var ds []amqp.Delivery
	timeout := time.After(releaseWait)
	for {
		select {
		case d, ok := <-deliveries:
			if !ok {
				return ds
			}
			ds = append(ds, d)
		case <-timeout:
			return ds
		}
	}
}

func (r *Replay) consumerTag() string { return "dlqt-replay-" + r.replayID }

// releaseHeld requeues every source still held, one by one, before the hold
// connection closes: on a quorum queue a close counts toward the delivery
// limit even where a requeue is free (4.3).
func (r *Replay) releaseHeld() {
	if r.held == nil {
		return
	}
	r.stopConsuming()
	h := r.held
	h.mu.Lock()
	defer h.mu.Unlock()
	tags := h.spare
	for _, tag := range h.tags {
		tags = append(tags, tag)
	}
	// In delivery order, so a queue that keeps returns in order keeps it.
	slices.Sort(tags)
	for _, tag := range tags {
		if err := h.ch.Nack(tag, false, true); err != nil {
			break // the channel is gone: the broker puts them back itself
		}
	}
	clear(h.tags)
	h.spare = nil
}

// Ack implements replay.Port: each source on its own, never multiple.
func (r *Replay) Ack(_ context.Context, ids []string) error {
	return r.settle(ids, func(ch *amqp.Channel, tag uint64) error { return ch.Ack(tag, false) })
}

// Requeue implements replay.Port.
func (r *Replay) Requeue(_ context.Context, ids []string) error {
	return r.settle(ids, func(ch *amqp.Channel, tag uint64) error { return ch.Nack(tag, false, true) })
}

func (r *Replay) settle(ids []string, do func(*amqp.Channel, uint64) error) error {
	if r.held == nil {
		return nil
	}
	h := r.held
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		tag, ok := h.tags[id]
		if !ok {
			continue
		}
		if err := do(h.ch, tag); err != nil {
			return fmt.Errorf("replay: settle %s: %w", id, err)
		}
		delete(h.tags, id)
	}
	return nil
}

// watch binds a temporary exclusive queue like every parking queue of the
// vhost (and the replay's own queue), so a copy of this replay that is dead
// lettered or parked again shows up here too; the parking queues keep their
// own copy. Copies are matched by the dlqt-replay-id header.
func (r *Replay) watch(top triage.Topology) error {
	parking := map[string]bool{r.queue: true}
	for _, p := range triage.FindParkingQueues(top, nil) {
		parking[p.Name] = true
	}
	type bind struct{ source, key, args string }
	seen := map[bind]bool{}
	var binds []triage.Binding
	for _, b := range top.Bindings {
		if b.Source == "" || b.DestinationType != "queue" || !parking[b.Destination] {
			continue
		}
		k := bind{b.Source, b.RoutingKey, fmt.Sprint(b.Arguments)}
		if !seen[k] {
			seen[k] = true
			binds = append(binds, b)
		}
	}
	if len(binds) == 0 {
		r.notes = append(r.notes, fmt.Sprintf("%s is reached only through the default exchange: copies that fail again cannot be watched", r.queue))
		return nil
	}
	ch, err := r.hold.Channel()
	if err != nil {
		return fmt.Errorf("replay: open watch channel: %w", err)
	}
	q, err := ch.QueueDeclare("", false, true, true, false, nil)
	if err != nil {
		return fmt.Errorf("replay: declare the watch queue: %w", err)
	}
	for _, b := range binds {
		if err := ch.QueueBind(q.Name, b.RoutingKey, b.Source, false, headersToTable(b.Arguments)); err != nil {
			return fmt.Errorf("replay: bind the watch queue to %q: %w", b.Source, err)
		}
	}
	deliveries, err := ch.Consume(q.Name, "", true, true, false, false, nil)
	if err != nil {
		return fmt.Errorf("replay: watch: %w", err)
	}
	go func() {
		for d := range deliveries {
			if id, _ := d.Headers[triage.HeaderReplayID].(string); id != r.replayID {
				// Other traffic may be heavy: it gets half the signal buffer
				// at most, so it can never crowd out a failed-again copy.
				if len(r.signals) < cap(r.signals)/2 {
					r.signal(otherDeadLetter(d))
				}
				continue
			}
			item, _ := d.Headers[triage.HeaderReplayItem].(string)
			if item == "" {
				item = d.MessageId
			}
			r.signal(replay.Signal{Kind: replay.SignalFailedAgain, ID: item, Reason: failedWhy(d)})
		}
	}()
	return nil
}

// otherDeadLetter reports a message that is not a copy of this replay but
// arrived in a parking queue meanwhile, named as the read path names it and
// with the queue it died in (its newest x-death, reliable on every
// version): the run counts it as collateral when that is a destination.
func otherDeadLetter(d amqp.Delivery) replay.Signal {
	m := toMessage(d, "", 0)
	id := triage.Identify([]triage.Message{m}, []triage.Envelope{triage.DecodeEnvelope(d.Body)})[0]
	s := replay.Signal{Kind: replay.SignalDeadLetter, ID: id, Reason: "parked by an application"}
	if deaths := triage.ParseDeaths(m.Headers); len(deaths) > 0 {
		s.Queue, s.Reason = deaths[0].Queue, string(deaths[0].Reason)
	}
	return s
}

// failedWhy says where a copy died again, from its newest x-death entry.
func failedWhy(d amqp.Delivery) string {
	deaths := triage.ParseDeaths(tableToHeaders(d.Headers))
	if len(deaths) == 0 {
		return "parked again by an application"
	}
	return fmt.Sprintf("%s in queue %s", deaths[0].Reason, deaths[0].Queue)
}
