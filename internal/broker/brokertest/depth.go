package brokertest

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
)

// Dial opens an AMQP connection to cfg's vhost, closed when the test ends:
// the tests' own view of the broker, independent of dlqt's.
func Dial(t testing.TB, cfg broker.Config) *amqp.Connection {
	t.Helper()
	u, err := cfg.VhostURL()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := amqp.Dial(u)
	if err != nil {
		t.Fatalf("dial vhost %q: %v", cfg.Vhost, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Depth is the ready count of queue, from a passive declare on a channel of
// its own (a failed one closes its channel).
func Depth(t testing.TB, conn *amqp.Connection, queue string) int {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		t.Fatalf("passive declare %s: %v", queue, err)
	}
	return q.Messages
}

// WaitDepth waits until queue holds want ready messages (requeues and dead
// lettering land asynchronously, quorum queues later than classic ones) and
// fails the test if it never does.
func WaitDepth(t testing.TB, conn *amqp.Connection, queue string, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := Depth(t, conn, queue)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue %s: %d ready messages, want %d", queue, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
