package broker

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
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
	mu sync.Mutex
	ch *amqp.Channel
	// want are the ids the hold was asked for; refs, by their place
	// among them, where each held message is (a tag of 0: not held, as
	// delivery tags begin at 1).
	want  *wanted
	refs  []heldRef
	store *heldStore // the held deliveries, on disk until published
	// tables are the headers of what Load read back, as delivered, for the
	// publish that follows (deliveredTable).
	tables map[string]amqp.Table
	// order is the hold's window, for a release in the queue's order
	// (window.requeue); settled are the tags acked or requeued before, a
	// bit each (a map of them took some 40 bytes a source).
	order   *window
	settled tagSet

	// On a quorum queue the hold's consumers stay up while it holds (see
	// keepConsuming): win are its consumers until they are cancelled, and
	// reading closes when their deliveries end.
	win     *window
	reading chan struct{}

	// classic says the queue is a classic one, whose process may apply
	// the acks long after they were sent (Replay.Finish); acked counts
	// them.
	classic bool
	acked   int

	// On a classic queue, once the hold's read has ended (readDone), the
	// messages not selected are given back in runs as the acks pass them
	// (giveBackBefore): sel are the selected messages' tags, ascending,
	// sel[:selNext] settled; every delivery up to back that is not
	// selected was given back.
	readDone        bool
	sel             []uint64
	selNext         int
	back            uint64
	baseReady, gave int
	// floor is the lowest delivery tag the hold may not have settled
	// (ackFromFloor): every tag below it was acked, requeued or given back.
	floor uint64
	// ackFrames counts the Ack frames sent, a multiple ack as one: what
	// the broker's channel had to apply.
	ackFrames int
}

// ref is where held message id is and its place among want, if the hold
// holds it. h.mu is held.
func (h *heldSources) ref(id string) (heldRef, int, bool) {
	k, ok := h.want.place(id)
	if !ok || k >= len(h.refs) || h.refs[k].tag == 0 {
		return heldRef{}, 0, false
	}
	return h.refs[k], k, true
}

// readEnded says the hold has read and named all it holds, its
// consumers cancelled: from now on what it gives back stays in the queue.
func (h *heldSources) readEnded() {
	h.mu.Lock()
	h.readDone = true
	h.mu.Unlock()
}

// hold registers selected message id as held under tag, at (h.mu held).
func (h *heldSources) hold(id string, tag uint64, at heldAt) {
	k, ok := h.want.place(id)
	if !ok {
		return // never: the hold holds only the ids it was asked for, or chose
	}
	for len(h.refs) <= k { // chosen as it read (HoldSelecting)
		h.refs = append(h.refs, heldRef{})
	}
	h.refs[k] = heldRef{tag: tag, heldAt: at}
	i, _ := slices.BinarySearch(h.sel, tag) // in queue order but for a few the read names at its end
	h.sel = slices.Insert(h.sel, i, tag)
}

// giveBackBefore gives back, before the ack of tag, the messages not
// selected that are still held before it, once there are settleRun of
// them and tag is the first selected message still held (so a multiple
// Nack gives back none of those). Held there, each ack would walk past
// them: the broker finds the delivery an ack names by walking what the
// channel holds from the oldest (the discard's sweep, settleInOrder), and
// a replay of every fifth message of 20,000 left its acks to be applied
// for minutes after it ended (Finish). h.mu is held.
func (h *heldSources) giveBackBefore(tag uint64) error {
	if !h.classic || !h.readDone {
		return nil // a requeue to a live consumer comes straight back to it
	}
	for h.selNext < len(h.sel) && h.settled.has(h.sel[h.selNext]) {
		h.selNext++
	}
	if h.selNext >= len(h.sel) || h.sel[h.selNext] != tag || tag <= h.back+1 {
		return nil
	}
	from, _ := slices.BinarySearch(h.sel, h.back+1)
	if int(tag-1-h.back)-(h.selNext-from) < settleRun { // those not selected between
		return nil
	}
	last := tag - 1 // the highest not selected below tag: a Nack naming a tag acked would close the channel
	for i := h.selNext - 1; i >= from && h.sel[i] == last; i-- {
		last--
	}
	if h.gave == 0 {
		h.baseReady = h.order.ready()
	}
	if err := h.ch.Nack(last, true, true); err != nil {
		return fmt.Errorf("give back the messages not replayed before %d: %w", tag, err)
	}
	h.gave += int(last-h.back) - (h.selNext - from - int(tag-1-last)) // less the selected up to last
	h.back = tag - 1
	if h.baseReady >= 0 {
		// The queue takes acks ahead of a requeue waiting in its mailbox:
		// sent at once, the next acks would still walk past all of these.
		h.order.awaitReady(h.baseReady + h.gave)
	}
	return nil
}

// Hold implements replay.Port. It consumes the queue with manual ack
// through windowed consumers (window.go; never a basic.get loop, never an
// unlimited prefetch), cancels them once it has read the depth it found,
// at most HoldLimit (or the broker goes quiet), and keeps the wanted
// messages unacked; every other one stays unacked too, as a delivery tag
// only, until the hold is released (see below). Identities are computed as the read path does
// (triage.Identify), over the messages that are not copies of this replay,
// so a failed-again copy neither gets held nor shifts an occurrence index.
//
// The held messages stay unacked until Ack, Requeue or Close; a replay that
// outlives the broker's consumer timeout (30 min by default) loses its hold
// and the broker requeues them: nothing is lost, the replay stops.
func (r *Replay) Hold(ctx context.Context, queue string, ids []string, replayID string) ([]replay.HeldMessage, error) {
	hr, err := r.beginHold(ctx, queue, ids, replayID)
	if err != nil || hr == nil {
		return nil, err
	}
	return r.holdRest(ctx, hr)
}

// holdRest reads what beginHold set up and sorts out what Hold returns.
func (r *Replay) holdRest(ctx context.Context, hr *holdRead) ([]replay.HeldMessage, error) {
	queue := hr.queue
	short, err := r.consumeAll(ctx, hr.w, hr.owed, hr.want, hr.pass)
	if err == nil {
		err = hr.pass.err
	}
	if err != nil {
		hr.abandon()
		return nil, err
	}
	if err := r.refuseAtLimit(queue, hr.cost, hr.pass); err != nil {
		hr.abandon()
		return nil, err
	}
	if hr.quorum && keepsConsumersUp(hr.cost) {
		r.noteShort(queue, short, hr.pass.read(), hr.want)
		r.noteRepeats(hr.pass)
		out := r.sortHeld(hr.pass)
		r.keepConsuming(hr.w)
		return out, nil
	}
	if err := r.endHoldRead(hr, short); err != nil {
		hr.abandon()
		return nil, err
	}
	r.noteRepeats(hr.pass)
	// The messages not selected stay unacked, bodiless, until the hold is
	// released (releaseHeld), and go back then in one Nack(0, multiple,
	// requeue). Released as they pass, while a consumer is up, each would
	// come straight back to this hold (TestRequeueToALiveHoldComesStraightBack);
	// released one by one after the read, a 3.10 classic queue takes them
	// back at about a hundred a second, minutes for a large hold, while a
	// multiple requeue puts 100,000 back in order in a second or two.
	out := r.sortHeld(hr.pass)
	r.held.readEnded()
	return out, nil
}

// holdRead is one hold's read of its queue, begun by beginHold: what it
// consumes through (w), how far (want), and what it keeps (pass).
type holdRead struct {
	queue  string
	cost   triage.DeliveryCost
	quorum bool
	w      *window
	owed   *owedRule
	want   int
	pass   *passing
	ch     *amqp.Channel
}

// abandon gives back all a failed hold read took and closes its channel.
func (hr *holdRead) abandon() {
	hr.w.release()
	hr.ch.Close()
}

// beginHold checks that queue may be held, waits for a plan's read to be
// back, opens the hold's channel and store, and sets up the read of the
// hold. It returns nil, with no error, when there is nothing to hold.
func (r *Replay) beginHold(ctx context.Context, queue string, ids []string, replayID string) (*holdRead, error) {
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
	if target := max(r.HoldLimit, r.ReadDepth); depth < target && len(ids) > 0 {
		// The plan's own read may still be on its way back (see
		// returning.go): a hold that took the part already back for the
		// queue would leave chosen messages out as gone.
		coming := func(ctx context.Context) bool { return r.stillComing(ctx, queue, target) }
		began := time.Now()
		if depth, err = readyBack(ctx, depth, target, func() (int, error) { return passiveDepth(r.hold, queue, r.live.cfg.Vhost) }, coming, readyWaits); err != nil {
			return nil, err
		}
		if depth < target && coming(ctx) {
			// Held now, they would be left out as gone: a replay of
			// 1,000,000 on a loaded node held 711,175, the rest still on
			// their way back, and said "untouched 288825: no longer in
			// big.dlq".
			return nil, fmt.Errorf("%d of the %d messages the plan read are not back in %s after %s, and no consumer holds them: the broker is still returning the plan's read; nothing was held or changed, run the replay again in a moment",
				target-depth, target, queue, time.Since(began).Round(time.Second))
		}
	}
	if cost.AsksFirst() && !r.AcceptDeliveryCost {
		return nil, triage.NewDeliveryCostError(queue, cost, depth)
	}
	ch, err := r.hold.Channel()
	if err != nil {
		return nil, fmt.Errorf("replay: open hold channel: %w", err)
	}
	store, err := newHeldStore()
	if err != nil {
		ch.Close()
		return nil, err
	}
	wanted := newWanted(ids)
	r.held = &heldSources{ch: ch, want: wanted, refs: make([]heldRef, len(wanted.ids)), store: store, tables: map[string]amqp.Table{},
		classic: q.Type == triage.QueueClassic}
	r.watchClose(ch.NotifyClose(make(chan *amqp.Error, 1)), "hold channel")
	if depth == 0 || (len(ids) == 0 && r.choose == nil) {
		return nil, nil
	}
	// A plan bounds the hold at its last chosen message (Plan.HoldLimit):
	// its read was bounded by the broker's memory headroom already, and a
	// hold cut short of it again would leave chosen messages behind as
	// gone (a hold of 2 cut to 1 on a node near its watermark, in a CI run
	// with a million messages on the node). Without a bound the hold reads
	// the whole queue, as far as that headroom allows.
	want := min(depth, r.HoldLimit)
	if r.HoldLimit <= 0 {
		want = depth
		if safe, why := r.live.safeHold(ctx, q, want); safe < want {
			r.note(fmt.Sprintf("the hold of %s reads %d of its %d messages: %s", queue, safe, depth, why))
			r.bound = &headroomCut{read: safe, depth: depth, why: why}
			want = safe
		}
	}
	pass := newPassing(queue, wanted, replayID, store)
	pass.cost = cost
	pass.tags = make([]uint64, 0, want) // a tag a delivery: grown by append, a hold of 1,000,000 kept a quarter more
	store.reserve(want)
	if r.choose != nil {
		pass.choose, pass.first, pass.lock = r.choose, triage.NewFirstSeen(), &r.held.mu
	}
	w := r.holdWindow(ch, queue, q, want)
	r.held.order = w
	return &holdRead{queue: queue, cost: cost, quorum: q.Type == triage.QueueQuorum, w: w, owed: r.live.owedRule(r.hold, q, depth),
		want: want, pass: pass, ch: ch}, nil
}

// endHoldRead cancels the hold's consumers and sorts in what the broker
// pushed before the cancel-ok: it may be selected too. short is how the
// read stopped short, if it did.
func (r *Replay) endHoldRead(hr *holdRead, short *shortRead) error {
	timeout := make(chan struct{})
	t := time.AfterFunc(releaseWait, func() { close(timeout) })
	seen := len(hr.w.pending) // received already, waiting for an earlier tag
	late, err := hr.w.cancel(timeout)
	t.Stop()
	if err != nil {
		return fmt.Errorf("replay: hold %q: %w", hr.queue, err)
	}
	for _, d := range late {
		hr.pass.take(d)
	}
	if hr.pass.err != nil {
		return hr.pass.err
	}
	if short != nil { // what was still on its way was this hold's
		short.n -= len(late) - seen
	}
	r.noteShort(hr.queue, short, hr.pass.read(), hr.want)
	return r.refuseAtLimit(hr.queue, hr.cost, hr.pass)
}

// readyBack waits while a queue's ready count (count) grows from have
// toward want: the messages of a read that just ended come back a
// consumer's worth at a time (a quorum queue read 0 ready at once after a
// browse of 100, in a loaded CI run, and the hold held nothing). The read
// was this process's own plan, so its messages are on their way back
// unless another consumer took them: the wait stops at want, after
// returnQuiet with nothing (more) back, or after returnWait, and returns
// the last count. A shorter wait before the first growth left a group
// behind: with 4,583 of a quorum queue's 10,300 back when the hold began
// and the broker busy for over a second, the replay moved 4,583 and said
// "untouched 5617".
//
// coming, asked once c.quiet passed with nothing back, says whether what
// is missing is still on its way (stillComing): then the wait goes on, up
// to c.wait. A node paging the requeue of a read of 1,000,000 returned
// nothing for over returnQuiet at 711,175. A count that still grows is
// waited for up to c.limit: the same node, slower another day, took over
// two minutes to give a read of 1,000,000 back (steps of about 35,000
// every 2 to 5 s), and a hold that gave up at returnWait refused the
// replay with 52,402 still to come.
func readyBack(ctx context.Context, have, want int, count func() (int, error), coming func(context.Context) bool, c readyWait) (int, error) {
	start, last := time.Now(), time.Now()
	for have < want {
		if time.Since(start) >= c.limit {
			return have, nil
		}
		if time.Since(last) >= c.quiet { // nothing back for a while
			if coming == nil || time.Since(start) >= c.wait || !coming(ctx) {
				return have, nil
			}
			last = time.Now() // asked again after another quiet spell
		}
		select {
		case <-ctx.Done():
			return have, ctx.Err()
		case <-time.After(returnPoll):
		}
		n, err := count()
		if err != nil {
			return have, err
		}
		if n > have {
			last = time.Now()
		}
		have = n
	}
	return have, nil
}

// readyWait are the waits of readyBack: quiet with nothing back, wait in
// all once quiet, limit in all while the count grows.
type readyWait struct{ quiet, wait, limit time.Duration }

// readyWaits are readyBack's waits. The limit is a bound, not a pace: a
// count that grows reaches what it waits for, or stops growing, long
// before it.
var readyWaits = readyWait{quiet: returnQuiet, wait: returnWait, limit: 10 * time.Minute}

// stillComing says whether the messages queue lacks of want ready are
// still its own, on their way back: no consumer holds any (the passive
// declare's count is exact), and the management API still counts want in
// all (seconds old: a message taken a moment ago is seen gone at the next
// ask). The replay holds the queue's lease, so no other dlqt action holds
// them either.
func (r *Replay) stillComing(ctx context.Context, queue string, want int) bool {
	_, consumers, err := passiveCounts(r.hold, queue, r.live.cfg.Vhost)
	if err != nil || consumers > 0 {
		return false
	}
	q, _, err := r.live.queueInfo(ctx, queue)
	return err == nil && q.Messages >= want
}

// holdWindow is the windowed consume of a hold of want messages of q (see
// window.go): consumers of a window each, sized by memoryWindow from the
// sizes read, the credit granted in all exactly want, so no hold ever asks
// for an unlimited prefetch (a quorum queue gives such a consumer a credit
// of 2,000 only, and a classic queue pushes its whole content into the
// client). Its consumers are named after the replay.
//
// Its windows are half a browse's: the replay publishes while its hold
// reads, and at the end of the read of 1,000,000 the deliveries the broker
// had pushed and the hold had not read yet took about 25 MB beside what
// the hold and the run keep of each message (peak RSS 253 MiB).
func (r *Replay) holdWindow(ch *amqp.Channel, queue string, q triage.Queue, want int) *window {
	size, ahead := memoryWindow(triage.DefaultMemoryBudget/2, q)
	w := newWindow(ch, queue, nil, size, want)
	w.ahead = ahead
	w.serial = q.Type == triage.QueueQuorum
	n := 0
	w.name = func() string {
		n++
		return r.consumerTag() + "-" + strconv.Itoa(n)
	}
	return w
}

// sortHeld picks out of what a hold read (p) the messages to keep: the
// selected ids, recorded in r.held, and this replay's own copies, reported
// as such. Everything read stays unacked until the hold is released.
func (r *Replay) sortHeld(p *passing) (out []replay.HeldMessage) {
	var own []int // positions of what is not a copy of this replay
	var ownBases []string
	s := p.stream // what it reported already is not reported again
	for i := range p.tags {
		if item, copied := p.copies[i]; copied {
			if !s.reported(i) {
				out = append(out, replay.HeldMessage{ID: item, Copy: true})
			}
			continue
		}
		if !p.namesAsItReads() { // it reported what it took as it read
			own, ownBases = append(own, i), append(ownBases, p.bases[i])
		}
	}
	h := r.held
	h.mu.Lock()
	defer h.mu.Unlock()
	names := ownBases // a selecting hold's: the first of each id it took, named as it read them
	if p.choose == nil {
		names = triage.SuffixIDs(ownBases)
	}
	for n, id := range names {
		i := own[n]
		sum, stored := p.sums[i]
		switch {
		case s.reported(i):
		case !stored:
		case s.reportedID(id): // the first of two with its id, reported as it was read
			h.store.drop(i)
		case p.selected(id):
			out = append(out, replay.HeldMessage{ID: id, BodySHA256: hex.EncodeToString(sum[:])})
			h.hold(id, p.tags[i], heldAt{record: int32(i), position: int32(n)})
		default: // its base id looked wanted, its occurrence is not
			h.store.drop(i)
		}
	}
	return out
}

// headroomCut is how far the broker's memory headroom let a hold read.
type headroomCut struct {
	read, depth int
	why         string
}

// HoldBound says, once the hold has begun, whether the broker's memory
// headroom bounded its read: it read the first read of depth messages,
// for why. why is "" when it read the whole queue (or --limit bounded it).
func (r *Replay) HoldBound() (read, depth int, why string) {
	if b := r.bound; b != nil {
		return b.read, b.depth, b.why
	}
	return 0, 0, ""
}

// noteRepeats says what a selecting hold read past that its selection
// takes: messages with the id of one read before them.
func (r *Replay) noteRepeats(p *passing) {
	if p.repeats > 0 {
		r.note(fmt.Sprintf("%d message(s) of %s that the selection takes repeat the id of one read before them: they stay in %s (a planned replay names them ID#2, ID#3...: dlqt replay %s --id ID#2)",
			p.repeats, r.queue, r.queue, r.queue))
	}
}

// heldAt is where a held message is: its record in the hold's store and its
// position among the queue's own messages (not this replay's copies).
type heldAt struct{ record, position int32 } // a hold reads fewer than 2^31 deliveries: 16 bytes a held message with its tag

// heldRef is a held message: its delivery tag and where it is.
type heldRef struct {
	tag uint64
	heldAt
}

// tagSet is a set of delivery tags, a bit each.
type tagSet []uint64

func (s *tagSet) add(tag uint64) {
	for uint64(len(*s)) <= tag/64 {
		*s = append(*s, 0)
	}
	(*s)[tag/64] |= 1 << (tag % 64)
}

func (s tagSet) has(tag uint64) bool {
	return tag/64 < uint64(len(s)) && s[tag/64]&(1<<(tag%64)) != 0
}

// Load implements replay.Port: the held message read back from the hold's
// store, its headers kept as delivered for the publish that follows.
func (r *Replay) Load(_ context.Context, id string) (triage.Message, error) {
	if r.held == nil {
		return triage.Message{}, fmt.Errorf("replay %s holds no message %s", r.replayID, id)
	}
	h := r.held
	h.mu.Lock()
	ref, _, ok := h.ref(id)
	h.mu.Unlock()
	at := ref.heldAt
	if !ok {
		return triage.Message{}, fmt.Errorf("replay %s holds no message %s", r.replayID, id)
	}
	d, err := h.store.get(int(at.record))
	if err != nil {
		return triage.Message{}, err
	}
	h.mu.Lock()
	h.tables[id] = d.Headers
	h.mu.Unlock()
	return toMessage(d, r.queue, int(at.position)), nil
}

// passing keeps of each delivery a hold reads only what the replay may
// need: its tag and base identity, and, when its identity may be one of
// the selected, the whole delivery in the hold's store on disk and the
// SHA-256 of its body in memory; a copy of this replay, its item id. Its
// body, headers and properties are dropped as soon as it is classified, so
// a hold keeps in memory a few dozen bytes a message, however many it
// replays.
type passing struct {
	queue, replayID string
	cost            triage.DeliveryCost
	atLimit         int      // read with no delivery left: a lost hold drops or dead-letters them
	want            *wanted  // the selected ids, and the base ids they may have
	streamed        tagSet   // by place among want: reported as the read went (streamOut)
	tags            []uint64 // delivery tag of each delivery, in queue order
	bases           []string // base id of each delivery, "" for a copy
	store           *heldStore
	sums            map[int][32]byte // by position: the body SHA-256 of what store has
	copies          map[int]string   // by position: the item id of each copy of this replay
	err             error            // the store's first error: the hold fails
	// stream, on a hold whose read goes on while the replay publishes,
	// reports each wanted message as soon as it is read (HoldStream).
	stream *streamOut
	// choose, on a selecting hold (HoldSelecting), takes the first message
	// of an id (first) that the selection takes; lock guards want then.
	choose  replay.Chooser
	first   *triage.FirstSeen
	lock    sync.Locker
	repeats int // chosen, with the id of a message read before: read past
}

func newPassing(queue string, want *wanted, replayID string, store *heldStore) *passing {
	return &passing{queue: queue, replayID: replayID, want: want, store: store,
		sums: map[int][32]byte{}, copies: map[int]string{}}
}

// take classifies one delivery, in queue order.
func (p *passing) take(d amqp.Delivery) {
	i := len(p.tags)
	p.tags = append(p.tags, d.DeliveryTag)
	if p.cost.Limited && p.cost.PeeksLeft(deliveryCount(d)) == 0 {
		p.atLimit++
	}
	if id, _ := d.Headers[triage.HeaderReplayID].(string); id == p.replayID {
		p.bases = append(p.bases, "")
		p.copies[i], _ = d.Headers[triage.HeaderReplayItem].(string)
		if p.stream != nil {
			p.stream.took(i, "")
		}
		return
	}
	base := baseID(d, p.queue)
	_, maybe := p.want.place(base)
	if p.choose != nil {
		maybe = false // its first messages it chooses, and only those
		first := p.first.First(base)
		switch chosen := p.choose(toMessage(d, p.queue, i), base); {
		case chosen && first:
			p.lock.Lock()
			p.want.add(base)
			p.lock.Unlock()
			maybe = true
		case chosen:
			p.repeats++
		}
	}
	if p.choose != nil && !maybe {
		base = "" // a selecting hold names what it takes as it reads: what it does not, it needs no name of
	}
	if !p.namesAsItReads() {
		p.bases = append(p.bases, p.want.intern(base))
	}
	if maybe && p.err == nil {
		sum, err := p.store.put(i, d)
		if err != nil {
			p.err = err
			return
		}
		p.sums[i] = sum
	}
	if p.stream != nil {
		p.stream.took(i, p.want.intern(base))
	}
}

// namesAsItReads says p is a streamed selecting hold's: it reports each
// message it takes as it reads it, under the id it read, and keeps no base
// id of each delivery for the end of its read (16 bytes a message).
func (p *passing) namesAsItReads() bool { return p.choose != nil && p.stream != nil }

func (p *passing) read() int { return len(p.tags) }

// What a hold's wanted say of an id.
const (
	selectedID byte = 1 << iota // it is one of the selected ids
	suffixedID                  // a selected id is it with an occurrence suffix
)

// selected says whether id is one of the ids the hold was asked for.
func (p *passing) selected(id string) bool { return p.want.is(id, selectedID) }

// refuseAtLimit refuses, without consent, a hold that read messages with no
// delivery left: a lost hold would cost each of them its place in the
// queue. With consent the hold goes on, and remembers what it risks for the
// report of a lost hold.
func (r *Replay) refuseAtLimit(queue string, cost triage.DeliveryCost, p *passing) error {
	r.holdRisk.Store(&holdRisk{held: p.read(), atLimit: p.atLimit, limited: cost.Limited})
	if p.atLimit == 0 || r.AcceptDeliveryCost {
		return nil
	}
	return &triage.HoldAtLimitError{Queue: queue, Limit: cost.Limit, AtLimit: p.atLimit, Held: p.read()}
}

// deliveryCount is a delivery's x-delivery-count (absent: 0), whatever
// integer type the broker encoded it in.
func deliveryCount(d amqp.Delivery) int {
	n, _ := fieldToValue(d.Headers["x-delivery-count"]).(int64)
	return int(n)
}

// baseID is triage.BaseIDs of one delivery. A message id, when there is
// one, is the identity: then neither the body is copied nor the envelope
// decoded. Without one (BaseIDs falls back to a content hash, "sha256:"),
// the whole message is looked at.
func baseID(d amqp.Delivery, queue string) string {
	if d.MessageId != "" {
		stub := triage.Message{Properties: triage.Properties{MessageID: d.MessageId}}
		if base := triage.BaseIDs([]triage.Message{stub}, nil)[0]; !strings.HasPrefix(base, "sha256:") {
			return base
		}
	}
	m := toMessage(d, queue, 0)
	return triage.BaseIDs([]triage.Message{m}, []triage.Envelope{triage.EnvelopeOf(m)})[0]
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
		delete(r.held.tables, id) // Load reads it again for another publish
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

// consumeAll hands p up to want deliveries, in queue order, through w;
// w's consumers stay up. A silence ends it as it ends a browse
// (silence.go); a hold that stops short because another consumer has the
// rest goes on with what it holds and returns why.
func (r *Replay) consumeAll(ctx context.Context, w *window, owed *owedRule, want int, p *passing) (*shortRead, error) {
	queue := w.queue
	closed := w.ch.NotifyClose(make(chan *amqp.Error, 1))
	if err := w.grow(); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	var ready []amqp.Delivery
	timer := time.NewTimer(firstMessageWait)
	defer timer.Stop()
	for p.read() < want {
		select {
		case d := <-w.merged:
			ready = w.order(d, ready[:0])
			for _, d := range ready {
				p.take(d)
			}
			clear(ready) // let the bodies go
			p.stream.flush(len(w.merged) == 0)
			if w.due(p.read()) {
				if err := w.grow(); err != nil {
					return nil, fmt.Errorf("replay: %w", err)
				}
			}
			timer.Reset(idleGap)
			owed.heard()
		case <-w.gone:
			if len(w.merged) == 0 {
				// A message whose headers the client cannot decode drops the
				// connection: name it (see quarantine.go).
				return nil, nameUnreadable(fmt.Errorf("replay: hold %q: the channel closed: %w", queue, closeCause(closed)), queue)
			}
		case <-timer.C:
			p.stream.flush(true)
			err := owed.afterSilence(ctx, w)
			switch short := shortOf(err); {
			case errors.Is(err, errDone):
				return nil, nil
			case short != nil:
				return short, nil
			case err != nil:
				return nil, fmt.Errorf("replay: hold %q: %w", queue, err)
			}
			timer.Reset(idleGap)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, nil
}

// noteShort says in the replay's notes that another consumer took what
// the hold did not get, if it did.
func (r *Replay) noteShort(queue string, short *shortRead, held, want int) {
	if short != nil && short.n > 0 {
		r.note(fmt.Sprintf("the hold of %s holds %d of %d messages: %s", queue, held, want, short.why()))
	}
}

func (r *Replay) consumerTag() string { return "dlqt-replay-" + r.replayID }

// releaseHeld gives back everything the hold channel still holds (the
// sources not settled and every message read but not selected), before the
// hold connection closes: consumers cancelled first, then one Nack of tag 0
// with multiple, which requeues every outstanding delivery in delivery
// order. A requeue, not the close: on a quorum queue a close counts toward
// the delivery limit even where a requeue is free (4.3).
func (r *Replay) releaseHeld() {
	if r.held == nil {
		return
	}
	r.StopHold()
	r.stopConsuming()
	h := r.held
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.ch.IsClosed() { // else the broker puts them back itself
		if h.order != nil {
			_ = h.order.requeue(0, func(tag uint64) bool { return !h.settled.has(tag) })
		} else {
			_ = h.ch.Nack(0, true, true)
		}
		// The channel's close-ok comes once the broker's channel process
		// has handled every ack and nack sent before it, so they are on
		// their way to the queue. The connection's close that follows
		// gives up after closeWait and closes the socket: acks the channel
		// process had not reached then died with it, and the queue put
		// back sources whose copies were confirmed, so each was delivered
		// twice (a CI run: 17,465 where 16,000 were left, after a replay of
		// 4,000 of 20,000 interleaved; the broker's channel walks its
		// outstanding deliveries for each ack, README). No deadline here:
		// a broker that stops answering is found by the heartbeat.
		_ = h.ch.Close()
	}
	clear(h.refs)
	h.store.close()
}

// Ack implements replay.Port: the sources that are every delivery the
// hold channel may still hold from its oldest up in one multiple ack
// (ackFromFloor), each other one on its own.
func (r *Replay) Ack(_ context.Context, ids []string) error {
	if err := r.lease.Check(); err != nil {
		return fmt.Errorf("replay: nothing acked: %w", err)
	}
	rest, err := r.ackFromFloor(ids)
	if err != nil {
		return err
	}
	return r.settle(rest, func(ch *amqp.Channel, tag uint64) error {
		if err := r.held.giveBackBefore(tag); err != nil {
			return err
		}
		err := ch.Ack(tag, false)
		if err == nil {
			r.held.acked++ // under held.mu (settle)
			r.held.ackFrames++
		}
		return err
	})
}

// Requeue implements replay.Port.
func (r *Replay) Requeue(_ context.Context, ids []string) error {
	return r.settle(ids, func(ch *amqp.Channel, tag uint64) error { return ch.Nack(tag, false, true) })
}

// ackFromFloor acks in one Ack(multiple) those of ids whose delivery tags
// are every tag from the lowest the hold has not settled up, and returns
// the others, unacked. A multiple ack then names exactly those, and
// nothing the replay does not take: it stops below the first tag that is
// not one of ids (a message read past, one not read from the client's
// buffer yet, one still in flight). Acked one by one, 100,000 sources were
// 100,000 frames for the broker to apply while it also took the copies.
func (r *Replay) ackFromFloor(ids []string) (rest []string, err error) {
	if r.held == nil || len(ids) < 2 {
		return ids, nil
	}
	h := r.held
	h.mu.Lock()
	defer h.mu.Unlock()
	type source struct {
		tag uint64
		id  string
	}
	sources := make([]source, 0, len(ids))
	for _, id := range ids {
		ref, _, ok := h.ref(id)
		if !ok {
			rest = append(rest, id) // settle skips it as before
			continue
		}
		sources = append(sources, source{ref.tag, id})
	}
	slices.SortFunc(sources, func(a, b source) int { return cmp.Compare(a.tag, b.tag) })
	for h.floor == 0 || h.settled.has(h.floor) || h.floor <= h.back { // tags begin at 1; what is below back went back
		h.floor++
	}
	n := 0
	for n < len(sources) && sources[n].tag == h.floor+uint64(n) {
		n++
	}
	for _, s := range sources[n:] {
		rest = append(rest, s.id)
	}
	if n < 2 {
		for _, s := range sources[:n] {
			rest = append(rest, s.id)
		}
		return rest, nil
	}
	if err := h.ch.Ack(sources[n-1].tag, true); err != nil {
		return nil, fmt.Errorf("replay: settle %d sources: %w", n, err)
	}
	for _, s := range sources[:n] {
		ref, k, _ := h.ref(s.id)
		h.refs[k] = heldRef{}
		h.settled.add(ref.tag)
		h.store.drop(int(ref.record))
		delete(h.tables, s.id)
	}
	h.acked += n
	h.ackFrames++
	return rest, nil
}

func (r *Replay) settle(ids []string, do func(*amqp.Channel, uint64) error) error {
	if r.held == nil {
		return nil
	}
	h := r.held
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		ref, k, ok := h.ref(id)
		if !ok {
			continue
		}
		if err := do(h.ch, ref.tag); err != nil {
			return fmt.Errorf("replay: settle %s: %w", id, err)
		}
		h.refs[k] = heldRef{}
		h.settled.add(ref.tag)
		h.store.drop(int(ref.record))
		delete(h.tables, id)
	}
	return nil
}

// Blind reports that the replay has no watch queue (replay.Blind): set
// once, when the replay opens.
func (r *Replay) Blind() bool { return r.blind }

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
		r.note(fmt.Sprintf("%s is reached only through the default exchange: copies that fail again cannot be watched", r.queue))
		r.blind = true
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
	id := triage.Identify([]triage.Message{m}, []triage.Envelope{triage.EnvelopeOf(m)})[0]
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
