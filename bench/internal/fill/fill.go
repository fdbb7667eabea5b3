// Package fill loads parked messages into a queue for the benchmarks:
// JSON envelopes with a failure block (five reason codes) and an x-death
// header, as a parking queue holds them, ids bench-0000000 up in order.
package fill

import (
	"context"
	"fmt"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
)

// ID is the message id of the i-th message loaded.
func ID(i int) string { return fmt.Sprintf("bench-%07d", i) }

// Dial opens a connection to cfg's vhost.
func Dial(cfg broker.Config) (*amqp.Connection, error) {
	url, err := cfg.VhostURL()
	if err != nil {
		return nil, err
	}
	return amqp.Dial(url)
}

// Load creates cfg.Vhost, declares queue (classic, durable) and publishes n
// messages of about size bytes with publisher confirms.
func Load(cfg broker.Config, queue string, n, size int) error {
	if cfg.Vhost == "" {
		return fmt.Errorf("-vhost is required")
	}
	if err := broker.CreateVhost(cfg); err != nil {
		return err
	}
	conn, err := Dial(cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	if _, err := ch.QueueDeclare(queue, true, false, false, false, nil); err != nil {
		return err
	}
	if err := ch.Confirm(false); err != nil {
		return err
	}
	return publish(ch, queue, n, size)
}

// publish sends n messages with a window of unconfirmed ones.
func publish(ch *amqp.Channel, queue string, n, size int) error {
	const window = 2000
	pending := make([]*amqp.DeferredConfirmation, 0, window)
	died := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range n {
		p := parked(i, size, died.Add(time.Duration(i)*time.Millisecond))
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", queue, false, false, p)
		if err != nil {
			return err
		}
		if pending = append(pending, dc); len(pending) == window {
			if !pending[len(pending)-1].Wait() {
				return fmt.Errorf("broker nacked message %d", i)
			}
			pending = pending[:0]
		}
	}
	if len(pending) > 0 && !pending[len(pending)-1].Wait() {
		return fmt.Errorf("broker nacked the last messages")
	}
	return nil
}

var codes = []string{"VALIDATION_FAILED", "TIMEOUT", "NOT_FOUND", "CONFLICT", "UPSTREAM_5XX"}

func parked(i, size int, died time.Time) amqp.Publishing {
	id := ID(i)
	body := fmt.Sprintf(`{"message_id":%q,"event_type":"order.placed","schema_version":"2","failure":{"reason_code":%q,"consumer":"billing","attempt":3,"last_failed_at":%q},"data":{"pad":"`,
		id, codes[i%len(codes)], died.Format(time.RFC3339Nano))
	body += strings.Repeat("x", max(size-len(body)-3, 0)) + `"}}`
	return amqp.Publishing{
		MessageId:    id,
		Timestamp:    died,
		ContentType:  "application/json",
		DeliveryMode: amqp.Persistent,
		Headers: amqp.Table{"x-death": []any{amqp.Table{
			"queue": "orders", "reason": "rejected", "count": int64(3), "time": died,
			"exchange": "orders.x", "routing-keys": []any{"order.placed"},
		}}},
		Body: []byte(body),
	}
}
