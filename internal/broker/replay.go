package broker

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage/replay"
)

// Replay is the broker side of one replay (replay.Port). It works on
// two connections of its own (docs/ARCHITECTURE.md): one holds the source
// messages and watches the parking queue, the other publishes (confirm mode,
// mandatory), so a broker that blocks publishers never stalls the acks and
// the watch. Closing it closes both, which requeues whatever is still held.
type Replay struct {
	live     *Live
	replayID string
	queue    string

	// AcceptDeliveryCost allows holding from a quorum queue with a delivery
	// limit: every message put back counts one delivery.
	AcceptDeliveryCost bool
	// HoldLimit bounds how many messages Hold reads, like a browse's limit:
	// the selection was made among the first that many (0: the default).
	HoldLimit int
	// ReadDepth is the ready count the plan's read began with (0: none):
	// the hold waits, briefly, for that read's messages to be back.
	ReadDepth int

	lease   *Lease // the queue's: one action per queue at a time
	blind   bool   // no watch queue: no copy can be seen failing again
	hold    *amqp.Connection
	publish *amqp.Connection
	pubCh   *amqp.Channel
	pubMu   sync.Mutex // one publish at a time: deferred confirms need ordered writes

	held    *heldSources
	signals chan replay.Signal
	returns chan amqp.Return

	retMu    sync.Mutex
	returned map[string]string // item id -> why, from basic.return

	pubLost     chan struct{} // closed when the publishing channel dies
	pubLostWhy  string        // set before pubLost closes
	pubLostOnce sync.Once

	blockMu   sync.Mutex
	unblocked chan struct{} // closed while publishing may go on

	holdRisk atomic.Pointer[holdRisk] // what the hold read, for the report of a lost hold

	notesMu sync.Mutex
	notes   []string
	stream  *holdStream    // a hold whose read goes on while the replay publishes
	choose  replay.Chooser // a hold that selects as it reads (HoldSelecting)
	bound   *headroomCut   // how far the broker's headroom let the hold read, when it cut it
	once    sync.Once
	done    chan struct{}
}

var _ replay.Port = (*Replay)(nil)

// OpenReplay prepares replay replayID of queue: the two connections and the
// watch queue bound like the parking queue (same exchanges, keys and
// arguments). Close it when done.
func (l *Live) OpenReplay(ctx context.Context, replayID, queue string) (*Replay, error) {
	l.released.forget(queue) // messages taken out: a count released before no longer holds (returning.go)
	top, err := l.Topology(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := top.Queue(queue); !ok {
		return nil, notFound(fmt.Sprintf("queue %q does not exist in vhost %q", queue, l.cfg.Vhost))
	}
	r := &Replay{
		live: l, replayID: replayID, queue: queue,
		signals:   make(chan replay.Signal, 1024),
		returns:   make(chan amqp.Return, 4096),
		returned:  map[string]string{},
		unblocked: make(chan struct{}),
		pubLost:   make(chan struct{}),
		done:      make(chan struct{}),
	}
	close(r.unblocked)
	if r.lease, err = l.TakeLease(ctx, queue, "replaying"); err != nil {
		return nil, err
	}
	if r.hold, err = l.dial(ctx, "dlqt replay "+replayID+" hold"); err != nil {
		r.lease.Release()
		return nil, err
	}
	receiveExactBodies(r.hold) // the replay publishes on the other one
	if r.publish, err = l.dial(ctx, "dlqt replay "+replayID+" publish"); err != nil {
		_ = closeConn(r.hold)
		r.lease.Release()
		return nil, err
	}
	r.watchClose(r.hold.NotifyClose(make(chan *amqp.Error, 1)), "hold connection")
	r.watchLease()
	if err := r.openPublishing(); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.watch(top); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// dial opens a connection of its own, named for the broker's connection list.
func (l *Live) dial(ctx context.Context, name string) (*amqp.Connection, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return l.nodes.dial(ctx, name, false)
}

// holdRisk is what a hold read: how many messages, and how many of them
// had no delivery left on a queue with a delivery limit.
type holdRisk struct {
	held, atLimit int
	limited       bool
}

// watchClose reports a close the replay did not ask for (a consumer timeout
// closes the hold channel; an operator or a proxy the connection). The
// broker returns what was held, but on a quorum queue with a delivery limit
// each return counts a delivery, and a message past its limit is
// dead-lettered or dropped: the report says what was held and what that
// may have cost, never that everything went back.
func (r *Replay) watchClose(closed <-chan *amqp.Error, what string) {
	go func() {
		select {
		case e, ok := <-closed:
			if ok && e != nil {
				r.signal(replay.Signal{Kind: replay.SignalLost, Reason: what + " closed by the broker (" + r.lostHold() + "): " + e.Reason})
			}
		case <-r.done:
		}
	}()
}

// lostHold says what the broker does with the messages of a lost hold.
func (r *Replay) lostHold() string {
	risk := r.holdRisk.Load()
	switch {
	case risk == nil:
		return "nothing was held yet"
	case !risk.limited:
		return fmt.Sprintf("%d held message(s) are returned to the queue", risk.held)
	case risk.atLimit > 0:
		return fmt.Sprintf("%d held message(s) are returned with a delivery counted each; %d of them had no delivery left and are dead-lettered or dropped", risk.held, risk.atLimit)
	}
	return fmt.Sprintf("%d held message(s) are returned with a delivery counted each, none of them past its limit", risk.held)
}

// Notes say what the replay cannot watch, e.g. a parking queue fed only
// through the default exchange has no binding to copy.
func (r *Replay) Notes() []string {
	r.notesMu.Lock()
	defer r.notesMu.Unlock()
	return slices.Clone(r.notes)
}

// note adds to Notes: the hold's read may go on in a goroutine of its own.
func (r *Replay) note(n string) {
	r.notesMu.Lock()
	r.notes = append(r.notes, n)
	r.notesMu.Unlock()
}

// Signals implements replay.Port.
func (r *Replay) Signals() <-chan replay.Signal { return r.signals }

// signal reports without ever blocking the connection's reader: a full
// channel drops the report, which only the watch could overflow.
func (r *Replay) signal(s replay.Signal) {
	select {
	case r.signals <- s:
	case <-r.done:
	default:
	}
}

// Close implements replay.Port: every source not acked is requeued, first
// explicitly, then by closing the hold connection.
func (r *Replay) Close() error { return r.end(context.Background(), nil, false) }

// Finish is Close, and then, on a classic queue the replay acked sources
// of, waits until the queue has applied those acks before the queue's
// lease goes: the replay is over when the broker says so, not when the
// acks were sent. A queue's process finds the delivery an ack names by
// walking the channel's outstanding deliveries from the oldest, so the
// acks of a group interleaved with others, each behind unsettled messages,
// cost it the square of the hold: 4,000 of 20,000 were applied 80 s after
// the replay had ended (3.10.8), and meanwhile the queue showed 3 of its
// 16,000 messages ready, and a node that restarted would have brought
// those sources back. waiting is called, with the number of acks, once the
// wait has taken a second; the wait ends with ctx.
func (r *Replay) Finish(ctx context.Context, waiting func(acks int)) error {
	return r.end(ctx, waiting, true)
}

// end releases the hold (its channel's close waits for the broker to take
// every ack sent on it), closes the connections and, with barrier, waits
// for the queue to apply the acks, then lets the lease go.
func (r *Replay) end(ctx context.Context, waiting func(acks int), barrier bool) error {
	var err error
	r.once.Do(func() {
		if h := r.held; waiting != nil && h != nil {
			h.mu.Lock()
			acks := h.acked
			h.mu.Unlock()
			t := time.AfterFunc(time.Second, func() { waiting(acks) })
			defer t.Stop()
		}
		r.releaseHeld()
		close(r.done)
		err = closeConns(r.publish, r.hold)
		if barrier && err == nil {
			err = r.awaitSourceAcks(ctx)
		}
		r.lease.Release() // last: nobody else may act before the sources are back
	})
	return err
}

// awaitSourceAcks is Finish's wait (ackBarrier), on a connection of the
// process: the replay's own are closed.
func (r *Replay) awaitSourceAcks(ctx context.Context) error {
	h := r.held
	if h == nil || !h.classic || h.acked == 0 {
		return nil // a quorum queue applies its settles in its log's order, fast
	}
	if ctx.Err() != nil {
		return fmt.Errorf("replay: interrupted, it did not wait for %s to apply its %d source acks: a read now may find those messages still held", r.queue, h.acked)
	}
	conn, err := r.live.connection(ctx)
	if err == nil {
		var ch *amqp.Channel
		if ch, _, err = ackBarrier(ctx, conn, r.queue); err == nil {
			ch.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("replay: could not wait for %s to apply its %d source acks (a read now may find those messages still held): %w", r.queue, h.acked, err)
	}
	return nil
}

// DestinationDepth implements replay.Port with passive declares.
func (r *Replay) DestinationDepth(ctx context.Context, queues []string) (int, error) {
	total := 0
	for _, q := range queues {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n, err := passiveDepth(r.hold, q, r.live.cfg.Vhost)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
