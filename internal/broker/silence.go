package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// owedRule decides, every time a hold has heard nothing for a while,
// whether the broker still owes it messages. Silence alone says little: a
// message being sent counts as unacked, not ready, from its first frame to
// its last, and a 100 MiB one took this 3.10 broker over 2 s to send, so a
// hold that stopped on "nothing ready" read such a queue as empty. What is
// owed is what the queue holds (ready plus unacked, management API, and
// never less than was ready when the read began) less what another reader
// held when the read began and what this one holds:
// with no other consumer on the queue, nobody else can hold it, so it is
// on its way here. With another consumer, it may be that consumer's: the
// read stops and says how many it did not hold (short), never that it has
// them all.
type owedRule struct {
	conn      *amqp.Connection
	queue     string
	elsewhere int // unacked by another reader when the read began
	depth     int // ready when the read began (passive declare: exact)
	figures   func(context.Context) (triage.Queue, error)
	lastHeard time.Time
}

// owedRule is the rule for a read of q whose ready count was depth when
// it began; conn is the connection the read consumes on.
func (l *Live) owedRule(conn *amqp.Connection, q triage.Queue, depth int) *owedRule {
	return &owedRule{
		conn: conn, queue: q.Name, elsewhere: heldElsewhere(q, depth), depth: depth, lastHeard: time.Now(),
		figures: func(ctx context.Context) (triage.Queue, error) {
			q, _, err := l.queueInfo(ctx, q.Name)
			return q, err
		},
	}
}

// heldElsewhere bounds what another reader holds unacked: the passive
// declare counts the ready messages now (depth); the management API counts
// all of them and the unacked ones, seconds ago. (A replay holds its
// sources with no consumer left, so the consumer count cannot tell.)
func heldElsewhere(q triage.Queue, depth int) int {
	return max(0, min(q.Unacked, q.Messages-depth))
}

// on is the rule for the same read taken again on conn (the first
// connection dropped).
func (o *owedRule) on(conn *amqp.Connection) *owedRule {
	again := *o
	again.conn, again.lastHeard = conn, time.Now()
	return &again
}

// heard notes a delivery: the broker is sending. A stream's read has no
// rule (it ends at the stream's end).
func (o *owedRule) heard() {
	if o != nil {
		o.lastHeard = time.Now()
	}
}

// shortRead stops a hold before what it wanted because the rest (n
// messages) is another consumer's (one of others): why says so, for the
// read's Bound ("held N of M: why").
type shortRead struct{ n, others int }

func (s *shortRead) Error() string { return s.why() }

func (s *shortRead) why() string {
	return fmt.Sprintf("%s unacked by another consumer of the queue (%d beside this read)", plural(s.n, "message"), s.others)
}

// shortOf is err's shortRead, nil when err is none.
func shortOf(err error) *shortRead {
	var s *shortRead
	if errors.As(err, &s) {
		return s
	}
	return nil
}

// afterSilence says what a hold reading through w does after a silence:
// wait on (nil), stop because it has all the broker owes it (errDone),
// stop short (a shortRead, which says why) or fail
// (any other error). What it holds is every delivery w received, those
// waiting for an earlier tag included.
func (o *owedRule) afterSilence(ctx context.Context, w *window) error {
	held, ours := int(w.seen), len(w.tags)
	ready, consumers, err := passiveCounts(o.conn, o.queue, "")
	if err != nil {
		return fmt.Errorf("count the queue: %w", err)
	}
	stalled := time.Since(o.lastHeard) > maxStall
	if ready > 0 {
		if stalled {
			return fmt.Errorf("the broker sent nothing for %s while %d messages were ready", maxStall, ready)
		}
		return nil // the broker is slow, not empty
	}
	q, err := o.figures(ctx)
	if err != nil {
		return fmt.Errorf("count the queue: %w", err)
	}
	// The management API's figures lag by seconds: 0 for a message
	// published a moment ago. What was ready when the read began is exact,
	// so neither may count for less than that.
	owed := max(q.Messages-o.elsewhere, o.depth) - held
	switch {
	case owed <= 0:
		return errDone
	case consumers > ours:
		return &shortRead{n: owed, others: consumers - ours}
	case stalled:
		return fmt.Errorf("the broker sent nothing for %s while %s were neither ready nor received here, and no other consumer reads the queue",
			maxStall, plural(owed, "message"))
	}
	return nil // on its way: a large message, or figures a few seconds old
}

// errDone ends a hold that holds all the broker owes it.
var errDone = errors.New("done")

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// passiveCounts counts the ready messages and the consumers of a queue. A
// failed passive declare closes its channel, so it gets a channel of its
// own.
func passiveCounts(conn *amqp.Connection, queue, vhost string) (ready, consumers int, err error) {
	ch, err := conn.Channel()
	if err != nil {
		return 0, 0, fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound {
		return 0, 0, notFound(fmt.Sprintf("queue %q does not exist in vhost %q", queue, vhost))
	}
	if err != nil {
		return 0, 0, fmt.Errorf("queue %q: %w", queue, err)
	}
	return q.Messages, q.Consumers, nil
}
