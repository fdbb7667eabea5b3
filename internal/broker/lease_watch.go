package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage/replay"
)

// retakeWait bounds the new take of a lease whose connection died: the
// broker deletes the dead connection's exclusive queue a moment after it,
// so the first declares may still be refused by the lease's own old queue.
const retakeWait = 5 * time.Second

// LeaseLostError says a lease's connection died and the queue could not be
// taken again (another actor took it, or the broker refused a connection):
// its holder must not ack anything more.
type LeaseLostError struct {
	Queue string
	Why   error
}

func (e *LeaseLostError) Error() string {
	return fmt.Sprintf("the lease on %s was lost (its connection closed) and could not be taken again, so nothing more is acked: %v", e.Queue, e.Why)
}

func (e *LeaseLostError) Unwrap() error { return e.Why }

// errLeaseReleased answers a check after Release.
var errLeaseReleased = errors.New("the lease was released")

// Lost is closed once the lease is lost for good. A lease taken under
// WithLease answers for its caller's; nil never closes.
func (ls *Lease) Lost() <-chan struct{} {
	if ls == nil {
		return nil
	}
	return ls.holder().lost
}

// holder is the lease that answers for ls: under WithLease, its caller's.
func (ls *Lease) holder() *Lease {
	for ls.outer != nil {
		ls = ls.outer
	}
	return ls
}

// Check is nil while the lease is held. If its connection died, the lease
// is taken again first and Check waits for that: call it before an ack.
// It asks the broker nothing while the connection is up.
func (ls *Lease) Check() error {
	if ls == nil {
		return nil
	}
	ls = ls.holder()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.ensure()
}

// Confirm is Check with a round trip: the lease queue is declared again on
// the lease's connection, which the broker refuses if it is gone to another
// connection and answers only while this one is alive. A batch of acks
// asks it once before the first.
func (ls *Lease) Confirm() error {
	if ls == nil {
		return nil
	}
	ls = ls.holder()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if err := ls.ensure(); err != nil {
		return err
	}
	err := declareLease(ls.conn, ls.name, ls.args)
	switch {
	case err == nil:
		return nil
	case ls.conn.IsClosed():
		return ls.ensure()
	}
	return ls.lose(err)
}

// watch takes the lease again when conn dies, holding ls.mu meanwhile so
// that a Check waits.
func (ls *Lease) watch(conn *amqp.Connection) {
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	go func() {
		<-closed // closed without a value on Release's own close
		ls.mu.Lock()
		defer ls.mu.Unlock()
		_ = ls.ensure()
	}()
}

// ensure, with ls.mu held, is nil while the lease is held, after taking it
// again on a new connection if the old one died.
func (ls *Lease) ensure() error {
	switch {
	case ls.lostErr != nil:
		return ls.lostErr
	case ls.released:
		return errLeaseReleased
	case !ls.conn.IsClosed():
		return nil
	}
	conn, err := ls.retake()
	if err != nil {
		return ls.lose(err)
	}
	ls.conn = conn
	ls.watch(conn)
	return nil
}

// lose marks the lease lost for good, with ls.mu held.
func (ls *Lease) lose(why error) error {
	if ls.lostErr == nil {
		ls.lostErr = &LeaseLostError{Queue: ls.queue, Why: why}
		close(ls.lost)
		if ls.conn != nil && !ls.conn.IsClosed() {
			_ = closeConn(ls.conn)
		}
	}
	return ls.lostErr
}

// retake declares the lease queue again on a new connection, with the
// arguments of the first take. A refusal is tried again until retakeWait:
// the old queue may still be the dead connection's; a queue that stays
// locked is another actor's, and says whose.
func (ls *Lease) retake() (*amqp.Connection, error) {
	ctx, cancel := context.WithTimeout(context.Background(), retakeWait)
	defer cancel()
	for {
		conn, err := ls.live.dial(ctx, "dlqt lease "+ls.queue)
		if err != nil {
			return nil, err
		}
		err = declareLease(conn, ls.name, ls.args)
		if err == nil {
			return conn, nil
		}
		_ = closeConn(conn)
		var ae *amqp.Error
		if !errors.As(err, &ae) || ae.Code != amqp.ResourceLocked {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ls.live.leaseHolder(context.Background(), ls.queue, ls.name)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// watchLease stops a replay whose lease is lost for good: another actor
// may be acting on the queue, so the replay must not go on beside it.
func (r *Replay) watchLease() {
	go func() {
		select {
		case <-r.lease.Lost():
			r.signal(replay.Signal{Kind: replay.SignalLost, Reason: r.lease.Check().Error()})
		case <-r.done:
		}
	}()
}
