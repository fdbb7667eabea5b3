package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// A read that begins while the broker is still putting back the messages of
// an earlier read would take the part already back for the whole queue. A
// read releases what it held with one Nack(0, multiple, requeue), but the
// broker requeues per consumer of that read, one step at a time: after a
// read of 100,000 small messages closed, a passive declare counted 35,470
// ready 73 ms later and 100,000 at 224 ms; after 300,000, about 32,000 more
// every 100 to 500 ms until 300,000 at 2.1 s (3.10.8, and 4.3.6 alike).
// Meanwhile the management API still shows the earlier read's figures (its
// statistics are up to 5 s old: 10 consumers and 270,500 unacked two
// seconds after that read was gone), which is how a read 3 s after one of
// 1,000,000 said "951,753 of 1,000,000 messages are held by another reader"
// with no other reader at all.
//
// The passive declare is exact and current: the ready count, and the
// consumer count. So a read whose queue has no consumer and fewer ready
// messages than the management API counts in all waits while the ready
// count grows, and reads once everything is back; if it is still growing
// when returnWait runs out, the read says how many were still on their way
// back, never "all". The management API's total may also be older than the
// queue's last messages (a queue filled and read within its 5 s): a read
// of this process counts, for releaseMemory, at least what this process's
// last read of the queue found ready; after a discard of this process, what
// the discard left is the total (the API's is from before it, and a read
// would wait for messages that are gone).
const (
	returnPoll = 100 * time.Millisecond
	// returnQuiet ends the wait when nothing came back for this long: what
	// is missing is held (a holder without a consumer, as a replay's hold)
	// or the management figures are stale (a discard a moment ago), not on
	// its way back. It is longer than the management API's statistics
	// interval (5 s by default), so a stale total is refreshed before it
	// ends the wait, and longer than the gaps seen between two steps of a
	// requeue.
	returnQuiet = 6 * time.Second
	// returnBrief is returnQuiet before anything came back when the
	// management API's figures show neither a consumer nor an unacked
	// message: nothing says a reader held the queue (its total is then
	// most likely from before a discard or an expiry), and a read would
	// otherwise wait for nothing. A read that held the queue long enough
	// to be seen (the 1,000,000 of the report), or whose release the
	// figures caught, gets the whole returnQuiet; so does a read after
	// another process's replay moved messages while the figures (seen
	// over 6 s old) still count them unacked.
	returnBrief = time.Second
	// returnWait bounds the whole wait.
	returnWait = 2 * time.Minute
	// returnFigures is how often the wait reads the management API again.
	returnFigures = time.Second
	// returnSettle ends a wait that knows no total (settle) once the
	// ready count stopped growing for this long: longer than the gaps
	// seen between two steps of a requeue.
	returnSettle = 600 * time.Millisecond
)

// returns is what a read found before it began: the ready count to read,
// the freshest management figures, and how many messages the broker was
// still returning when the wait gave up (0 when all came back, or when
// what is missing is not on its way).
type returns struct {
	ready, consumers int
	q                triage.Queue
	returning        int
}

// awaitReturns waits, before a read of q on conn takes its depth, while the
// broker is still returning the messages of an earlier read (see above).
// note, when set, is told how many are still to come while it waits.
func (l *Live) awaitReturns(ctx context.Context, conn *amqp.Connection, q triage.Queue, note func(int)) (returns, error) {
	return awaitReturns(ctx, q, l.released.recent(q.Name), note, returnClock{poll: returnPoll, quiet: returnQuiet, brief: returnBrief, wait: returnWait, figures: returnFigures, settle: returnSettle},
		func() (int, int, error) { return passiveCounts(conn, q.Name, l.cfg.Vhost) },
		func(ctx context.Context) (triage.Queue, error) {
			fresh, _, err := l.queueInfo(ctx, q.Name)
			return fresh, err
		},
		func() bool {
			if own, ok := ctx.Value(leaseKey{l.cfg.Vhost, q.Name}).(*Lease); ok && own != nil {
				// The lease is the caller's (a replay takes it before it
				// reads its plan): no other action holds the queue, so
				// what is missing is on its way back.
				return false
			}
			return leased(conn, q.Name)
		})
}

// leased says whether a dlqt action (a replay or a discard) holds the lease
// of queue: the messages it holds unacked, with no consumer left while a
// replay publishes them, are its own, not on their way back. The lease is
// an exclusive queue: another connection's passive declare of it is
// refused with RESOURCE_LOCKED, and NOT_FOUND says there is none.
func leased(conn *amqp.Connection, queue string) bool {
	ch, err := conn.Channel()
	if err != nil {
		return false
	}
	defer ch.Close()
	_, err = ch.QueueDeclarePassive(leaseName(queue), false, false, false, false, nil)
	var ae *amqp.Error
	return err == nil || (errors.As(err, &ae) && ae.Code == amqp.ResourceLocked)
}

// returnClock holds the waits of awaitReturns.
type returnClock struct{ poll, quiet, brief, wait, figures, settle time.Duration }

func awaitReturns(ctx context.Context, q triage.Queue, own release, note func(int), c returnClock,
	counts func() (ready, consumers int, err error), figures func(context.Context) (triage.Queue, error),
	leased func() bool) (returns, error) {
	ready, consumers, err := counts()
	if err != nil {
		return returns{}, err
	}
	r := returns{ready: ready, consumers: consumers, q: q}
	if own.total(r.q.Messages) <= r.ready && r.consumers == 0 {
		// The management API's total can be older than the queue's last
		// messages (a queue filled, read by another dlqt and read again
		// within its statistics interval): it then says nothing is
		// missing while the earlier read's messages are still coming
		// back (TestAStaleTotalDoesNotHideMessagesStillComingBack: a
		// replay planned 10,008 of a group of 12,000, under load, right
		// after a dry run). A ready count that grows says so whatever
		// the total: wait until it stops.
		return settle(ctx, r, c, counts)
	}
	start := time.Now()
	lastGrowth, lastFigures := start, start
	grew, told, checked := false, -1, false
	for {
		missing := own.total(r.q.Messages) - r.ready
		// A consumer holds what is missing, or nothing is: a consumer's
		// messages are said to be held elsewhere, as before.
		if missing <= 0 || r.consumers > 0 {
			return r, nil
		}
		if !checked {
			checked = true
			if leased() {
				return r, nil // a replay's or a discard's hold: held elsewhere
			}
		}
		if grew && note != nil && missing != told {
			note(missing)
			told = missing
		}
		now := time.Now()
		quiet := c.quiet
		if !grew && r.q.Consumers == 0 && r.q.Unacked == 0 {
			quiet = c.brief
		}
		if now.Sub(lastGrowth) >= quiet {
			return r, nil // nothing on its way: held, or figures stale
		}
		if now.Sub(start) >= c.wait {
			if grew {
				r.returning = missing
			}
			return r, nil
		}
		n, cons, err := countAfter(ctx, c.poll, counts)
		if err != nil {
			return r, err
		}
		if n > r.ready {
			grew, lastGrowth = true, time.Now()
		}
		r.ready, r.consumers = n, cons
		if time.Since(lastFigures) >= c.figures {
			fresh, err := figures(ctx)
			if err != nil {
				return r, fmt.Errorf("count the queue: %w", err)
			}
			r.q, lastFigures = fresh, time.Now()
		}
	}
}

// settle takes one more count after c.poll and, while the ready count
// grows by a requeue's steps (returnStep or more a poll), counts again
// until it has not for c.settle, at most c.quiet in all. A queue that
// applications keep publishing to grows too, but by a few messages a poll
// (TestTUICursorFollowsTheQueueWhenTheListResorts waited 2 min for its read
// when any growth counted); a read's requeue puts back tens of thousands
// in one step (returning.go, above).
func settle(ctx context.Context, r returns, c returnClock, counts func() (int, int, error)) (returns, error) {
	start, last := time.Now(), time.Now()
	quiet := c.poll // the first look: nothing grew yet
	for {
		n, cons, err := countAfter(ctx, c.poll, counts)
		if err != nil {
			return r, err
		}
		if n-r.ready >= returnStep {
			last, quiet = time.Now(), c.settle
		}
		r.ready, r.consumers = n, cons
		if cons > 0 || time.Since(last) >= quiet || time.Since(start) >= c.quiet {
			return r, nil
		}
	}
}

// returnStep is the growth of the ready count in one poll that settle
// takes for a requeue under way: 2,000 msg/s, past what a parking queue
// takes in even in an incident, far below a requeue's steps.
const returnStep = 200

// countAfter counts the queue again after poll.
func countAfter(ctx context.Context, poll time.Duration, counts func() (int, int, error)) (ready, consumers int, err error) {
	select {
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	case <-time.After(poll):
	}
	return counts()
}

// stillReturning is the Bound of a read that began before the broker had
// returned n messages of an earlier read.
func stillReturning(n int) string {
	return fmt.Sprintf("the broker was still returning %s of an earlier read", plural(n, "message"))
}

// releaseMemory is how long a read trusts what this process last did to
// its queue over the management API's total: two of its statistics
// intervals.
const releaseMemory = 10 * time.Second

// releases are, by queue, what this process's last read or discard left in
// it.
type releases struct {
	mu   sync.Mutex
	last map[string]release
}

// release is what a read or a discard of this process left in a queue:
// at least n messages (a read's ready count when it began), or, exact,
// n in all (what a discard left of the ready messages it began with).
// The zero release knows nothing.
type release struct {
	n     int
	exact bool
	at    time.Time
}

// total is the queue's total as the management API counts it (figures),
// corrected by what this process knows.
func (r release) total(figures int) int {
	switch {
	case r.at.IsZero():
		return figures
	case r.exact:
		return r.n
	}
	return max(figures, r.n)
}

// note records what a read or a discard of queue left in it now.
func (r *releases) note(queue string, n int, exact bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = map[string]release{}
	}
	r.last[queue] = release{n: n, exact: exact, at: time.Now()}
}

// forget drops queue's release: an action took messages out of it.
func (r *releases) forget(queue string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.last, queue)
}

// recent is what this process last left in queue, if within
// releaseMemory; else the zero release.
func (r *releases) recent(queue string) release {
	r.mu.Lock()
	defer r.mu.Unlock()
	rel, ok := r.last[queue]
	if !ok || time.Since(rel.at) > releaseMemory {
		return release{}
	}
	return rel
}
