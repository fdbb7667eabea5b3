package broker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/connect"
	"github.com/dlqt/dlqt/internal/triage"
)

// Live reads a running broker: topology through the management API, messages
// through AMQP. It implements triage.Reader and is safe for concurrent use.
type Live struct {
	cfg Config
	// appFrames go with every topology read (triage.Topology.AppFrames).
	appFrames []string
	mgmt      *management
	nodes     *amqpNodes // the AMQP listeners, pointed at cfg.Vhost; hold the password

	mu     sync.Mutex
	conn   *amqp.Connection
	closed bool
	known  *triage.Broker // version and flags, once read (version.go)
	actor  string         // who takes this reader's leases (lease.go)

	released releases // what the last reads released, by queue (returning.go)
}

var _ triage.Reader = (*Live)(nil)

// Dial checks that the management API answers with these credentials and
// that the vhost exists, then opens the AMQP connection.
//
// The AMQP connection is opened eagerly: a wrong AMQP port, credentials that
// differ from the management user's, or a missing vhost permission then show
// at startup as one line, not halfway through the first browse. If the
// connection drops later, the next Browse opens a new one.
func Dial(ctx context.Context, cfg Config) (*Live, error) {
	cc, err := cfg.Connect()
	if err != nil {
		return nil, err
	}
	return DialConn(ctx, cc)
}

// Describe names the broker for the status line: "127.0.0.1:5672 vhost /",
// the node reached last.
func (l *Live) Describe() string { return l.nodes.current() + " vhost " + l.cfg.Vhost }

// Close closes the AMQP connection; every message still held is requeued
// by the broker.
func (l *Live) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.conn == nil || l.conn.IsClosed() {
		return nil
	}
	err := closeConn(l.conn)
	l.conn = nil
	return err
}

// connection returns the open AMQP connection, reopening a dropped one on
// the next node that answers.
func (l *Live) connection(ctx context.Context) (*amqp.Connection, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errors.New("broker reader is closed")
	}
	if l.conn != nil && !l.conn.IsClosed() {
		return l.conn, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	conn, err := l.nodes.dial(ctx, "dlqt browse", l.conn != nil)
	if err != nil {
		return nil, err
	}
	receiveExactBodies(conn) // it never publishes
	l.conn = conn
	return conn, nil
}

// causedError is one readable line that still unwraps to the error behind
// it, so a caller can ask errors.Is(err, syscall.ECONNREFUSED) instead of
// matching the text.
type causedError struct {
	msg   string
	cause error
}

func because(cause error, format string, args ...any) error {
	return &causedError{fmt.Sprintf(format, args...), cause}
}
func (e *causedError) Error() string { return e.msg }
func (e *causedError) Unwrap() error { return e.cause }

// notFoundError is one readable line that still matches triage.ErrNotFound.
type notFoundError struct{ msg string }

func notFound(msg string) error               { return &notFoundError{msg} }
func (e *notFoundError) Error() string        { return e.msg }
func (e *notFoundError) Is(target error) bool { return target == triage.ErrNotFound }

// DialConn is Dial with the settings already resolved (cfg.Connect), so a
// caller can ask for a password before it shows that it is connecting.
func DialConn(ctx context.Context, cc *connect.Conn) (*Live, error) {
	mgmt, err := newManagement(cc)
	if err != nil {
		return nil, err
	}
	l := &Live{cfg: Config{Vhost: cc.Vhost}, mgmt: mgmt, nodes: newAMQPNodes(cc)}
	if err := mgmt.check(ctx, cc.Vhost); err != nil {
		return nil, bothDown(ctx, l, err)
	}
	if _, err := l.connection(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// UseAppFrames names the packages that are the operator's own (the config's
// app_frames): every topology read carries them, so failures are placed
// in the operator's code.
func (l *Live) UseAppFrames(globs []string) { l.appFrames = globs }

// bothDown asks AMQP when the management API refused the connection: if
// AMQP does too, the broker is down or both ports are wrong, and the error
// names both addresses, not only the management plugin.
func bothDown(ctx context.Context, l *Live, mgmtErr error) error {
	if !errors.Is(mgmtErr, syscall.ECONNREFUSED) {
		return mgmtErr // it answered, or failed otherwise: what it said is the error
	}
	amqpErr := func() error { _, err := l.connection(ctx); return err }()
	if amqpErr == nil {
		l.Close()
		return mgmtErr // the broker is up: the management plugin is the question
	}
	if !errors.Is(amqpErr, syscall.ECONNREFUSED) {
		// AMQP answered and failed (a certificate, a password): the broker
		// is there, and the management API's error carries the hint for it
		// (tls.ca_file…) where one node of several refused
		return mgmtErr
	}
	head := func(e error) string { h, _, _ := strings.Cut(e.Error(), " — "); return h }
	return because(mgmtErr, "neither AMQP nor the management API answers: %s; %s — is RabbitMQ running there, and are the ports right?", head(amqpErr), head(mgmtErr))
}
