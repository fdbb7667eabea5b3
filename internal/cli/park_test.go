package cli

import (
	"context"
	"fmt"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// parkMany makes a vhost of its own (prefix) with a queue "parking" of n
// JSON messages, ids m-00000 up in order, reason codes E0, E1, E2 in turn
// and pad in each body, published with confirms. It returns the vhost, a
// connection to it and the ids.
func parkMany(t *testing.T, prefix string, n int, pad string) (broker.Config, *amqp.Connection, []string) {
	t.Helper()
	cfg, conn, ch := parkingQueue(t, prefix)
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	var last *amqp.DeferredConfirmation
	var err error
	for i := range n {
		ids[i] = fmt.Sprintf("m-%05d", i)
		body := fmt.Sprintf(`{"failure":{"reason_code":"E%d"},"pad":%q}`, i%3, pad)
		if last, err = ch.PublishWithDeferredConfirmWithContext(context.Background(), "", "parking", false, false,
			amqp.Publishing{MessageId: ids[i], ContentType: "application/json", Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
	}
	if n > 0 && !last.Wait() {
		t.Fatal("publish not confirmed")
	}
	brokertest.WaitDepth(t, conn, "parking", n)
	return cfg, conn, ids
}

// parkingQueue makes a vhost of its own (prefix) with an empty durable
// queue "parking", and a channel on it that the test's end closes.
func parkingQueue(t *testing.T, prefix string) (broker.Config, *amqp.Connection, *amqp.Channel) {
	t.Helper()
	cfg := brokertest.NewVhost(t, prefix)
	conn := brokertest.Dial(t, cfg)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	if _, err := ch.QueueDeclare("parking", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	return cfg, conn, ch
}
