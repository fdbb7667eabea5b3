package broker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// LeasePrefix starts the name of every lease queue. A lease is dlqt's own
// bookkeeping, so the topology leaves these queues out.
const LeasePrefix = "dlqt.lease."

// Lease is the right to discard from or replay one queue: an exclusive,
// auto-delete queue named after it, declared on a connection of its own.
// Any dlqt on any host sees it; the broker deletes it when the connection
// dies, so a holder killed with -9 frees it.
//
// The lease is only as good as its connection: a proxy's idle cut or an
// admin's close frees it while its holder goes on. So a lease watches its
// connection and, when it dies, takes the queue again at once; until that
// is done its holder's next ack waits (Check), and if another actor got
// there first the lease is lost for good (Lost) and nothing more is acked.
type Lease struct {
	outer        *Lease // set on a lease the caller already holds: it answers for it
	live         *Live
	name         string
	vhost, queue string
	args         amqp.Table

	mu       sync.Mutex // held while a lost connection is taken again
	conn     *amqp.Connection
	released bool
	lostErr  error
	lost     chan struct{} // closed once the lease is lost for good
}

// LeaseHeldError says who holds a queue's lease, doing what, since when.
// Holder, Doing and Host are what the holder claims (the lease queue's
// arguments, which anyone may declare); User and Peer are what the broker
// itself says of the connection that owns the queue, empty when the
// management API does not show it to this user. All of them are text from
// the broker, redacted and sanitised as they are read.
type LeaseHeldError struct {
	Queue, Holder, Doing, Host string
	User, Peer                 string
	Since                      time.Time
}

func (e *LeaseHeldError) Error() string {
	since := "a moment ago"
	if !e.Since.IsZero() {
		since = "since " + e.Since.Local().Format("15:04:05")
	}
	who := e.Holder
	if who == "" {
		who = "another dlqt"
	}
	seen := "" // the broker's word, beside the holder's claim
	switch {
	case e.User != "" && e.Peer != "":
		seen = fmt.Sprintf(" (broker user %s from %s)", e.User, e.Peer)
	case e.User != "":
		seen = fmt.Sprintf(" (broker user %s)", e.User)
	}
	return fmt.Sprintf("%s is %s %s %s%s: one action per queue at a time, try again when it is done", who, e.Doing, sanitize.Line(e.Queue), since, seen)
}

// leaseName is the lease queue of queue; a name past the broker's 255
// bytes is cut and made unique with a hash.
func leaseName(queue string) string {
	name := LeasePrefix + queue
	if len(name) <= 255 {
		return name
	}
	sum := sha256.Sum256([]byte(queue))
	return name[:200] + "~" + hex.EncodeToString(sum[:16])
}

// ActAs names who this reader's leases are taken by (the journal's actor).
func (l *Live) ActAs(actor string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.actor = actor
}

func (l *Live) holder() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.actor
}

// leaseKey finds in a context the lease its caller already holds.
type leaseKey struct{ vhost, queue string }

// WithLease is ctx carrying a lease its caller took: a TakeLease under it
// for the same queue is the caller's own and returns a lease that releases
// nothing. A headless replay takes the lease before it reads its plan, so a
// racer is refused before it looks, and the replay's own port finds it.
func WithLease(ctx context.Context, ls *Lease) context.Context {
	if ls == nil || ls.conn == nil {
		return ctx
	}
	return context.WithValue(ctx, leaseKey{ls.vhost, ls.queue}, ls)
}

// TakeLease takes queue's lease for doing ("replaying", "discarding from"),
// or says who holds it. Release it when done.
func (l *Live) TakeLease(ctx context.Context, queue, doing string) (*Lease, error) {
	if held, ok := ctx.Value(leaseKey{l.cfg.Vhost, queue}).(*Lease); ok && held != nil {
		return &Lease{outer: held, vhost: held.vhost, queue: queue}, nil // the caller's: it releases it
	}
	conn, err := l.dial(ctx, "dlqt lease "+queue)
	if err != nil {
		return nil, err
	}
	name := leaseName(queue)
	host, _ := os.Hostname()
	args := amqp.Table{
		"x-dlqt-holder": l.holder(), "x-dlqt-doing": doing, "x-dlqt-host": host,
		"x-dlqt-since": time.Now().UTC().Format(time.RFC3339),
	}
	err = declareLease(conn, name, args)
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.ResourceLocked {
		_ = closeConn(conn)
		return nil, l.leaseHolder(ctx, queue, name)
	}
	if err != nil {
		_ = closeConn(conn)
		return nil, fmt.Errorf("lease on %q: %w", queue, err)
	}
	ls := &Lease{live: l, conn: conn, name: name, vhost: l.cfg.Vhost, queue: queue, args: args, lost: make(chan struct{})}
	ls.watch(conn)
	return ls, nil
}

func declareLease(conn *amqp.Connection, name string, args amqp.Table) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	_, err = ch.QueueDeclare(name, false, true, true, false, args)
	if err == nil {
		err = ch.Close()
	}
	return err
}

// leaseHolder reads who holds a lease: the holder's claims from its
// queue's arguments, and from the broker the user and address of the
// connection that owns it.
func (l *Live) leaseHolder(ctx context.Context, queue, name string) error {
	var q struct {
		Arguments map[string]any  `json:"arguments"`
		Owner     json.RawMessage `json:"owner_pid_details"` // [] until the API has seen the connection
	}
	held := &LeaseHeldError{Queue: queue, Doing: "acting on"}
	if err := l.mgmt.get(ctx, "queues/"+url.PathEscape(l.cfg.Vhost)+"/"+url.PathEscape(name), &q); err != nil {
		return held // the holder let go meanwhile, or the API cannot say who
	}
	str := func(k string) string { s, _ := q.Arguments[k].(string); return brokerText(s) }
	held.Holder, held.Host = str("x-dlqt-holder"), str("x-dlqt-host")
	if d := str("x-dlqt-doing"); d != "" {
		held.Doing = d
	}
	held.Since, _ = time.Parse(time.RFC3339, str("x-dlqt-since"))
	var owner struct {
		Name     string `json:"name"`
		PeerHost string `json:"peer_host"`
	}
	var conn struct {
		User string `json:"user"`
	}
	if json.Unmarshal(q.Owner, &owner) == nil && owner.Name != "" &&
		l.mgmt.get(ctx, "connections/"+url.PathEscape(owner.Name), &conn) == nil {
		// a management user sees only its own connections
		held.User, held.Peer = brokerText(conn.User), brokerText(owner.PeerHost)
	}
	return held
}

// brokerText is a string from the broker made fit for a terminal, JSON or
// the journal: redacted, then sanitised to one line.
func brokerText(s string) string {
	red, _ := redact.New().Text(strings.TrimSpace(s))
	return sanitize.Line(red)
}

// Release gives the lease back. The queue is deleted first, with a reply:
// the broker removes an exclusive queue after its connection closes, but
// not before close-ok, so the next actor could otherwise still be refused.
func (ls *Lease) Release() error {
	if ls == nil || ls.conn == nil {
		return nil
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.released = true
	if ch, err := ls.conn.Channel(); err == nil {
		_, _ = ch.QueueDelete(ls.name, false, false, false) // the close removes it anyway
		_ = ch.Close()
	}
	return closeConn(ls.conn)
}
