package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// Application-managed retries: the order worker counts attempts in
// x-retry-count, parks a failed message in the next TTL bucket (which expires
// it back to orders.exchange), and after the last bucket publishes it to the
// DLQ itself, with a failure block. So those messages carry x-death entries
// from every bucket and yet were put in the DLQ by an application.
const (
	orderWorker        = "order-worker"
	orderWorkerVersion = "release-2026-11-28"
	orderSchemaMax     = 3 // newer envelopes are rejected outright
)

// orderFault is the worker's business rule: which orders fail, and the
// stable code and the exception text it reports.
func orderFault(env scenarioEnvelope) (code, text string) {
	if env.EventType == "customer.address.updated" {
		addr, _ := env.Data["address"].(map[string]any)
		if pc, _ := addr["postcode"].(string); pc == "" {
			return "address_invalid", fmt.Sprintf("AddressValidationError: address of %v has no postcode", env.Data["customer_id"])
		}
		return "", ""
	}
	if tp, _ := env.Data["tax_profile"].(string); tp == "" {
		return "customer_tax_profile_missing", fmt.Sprintf("TaxProfileNotFound: customer %v has no tax profile for region VN-79", env.Data["customer_id"])
	}
	return "", ""
}

func ordersFlow(ctx context.Context, e *flowEnv) (flowOutcome, error) {
	conn, pub, probe, base, now := e.conn, e.pub, e.probe, e.base, e.now

	orders := orderEvents(now)
	var parked []Produced
	deliveries := 0 // how many times the worker will see a message in all
	for _, m := range orders {
		if err := pub.publish(ctx, ordersExchange, ordersKey, m); err != nil {
			return flowOutcome{}, err
		}
		var env scenarioEnvelope
		_ = json.Unmarshal(m.Body, &env) // built by orderEvents
		code, _ := orderFault(env)
		switch {
		case env.SchemaVersion > orderSchemaMax:
			deliveries++
			parked = append(parked, brokerDeath(m, ordersMain, triage.ReasonRejected))
		case code == "":
			deliveries++
		default:
			deliveries += len(ordersRetryBuckets) + 1
			p := Produced{MessageID: m.MessageId, Reason: triage.ReasonPublished, ReasonCode: code,
				EventType: env.EventType, RetryCount: len(ordersRetryBuckets)}
			for _, b := range ordersRetryBuckets {
				p.Deaths = append(p.Deaths, DeathStep{Queue: b.name, Reason: triage.ReasonExpired})
			}
			parked = append(parked, p)
		}
	}

	if err := runOrderWorker(ctx, conn, deliveries); err != nil {
		return flowOutcome{}, err
	}
	want := base[ordersDLQ] + len(parked)
	if err := probe.waitDepth(ctx, ordersDLQ, want); err != nil {
		return flowOutcome{}, err
	}
	depths := map[string]int{ordersDLQ: want, ordersMain: 0}
	for _, b := range ordersRetryBuckets {
		depths[b.name] = 0
	}
	return flowOutcome{
		parked: []ParkingScenario{{
			Queue:            ordersDLQ,
			Type:             triage.QueueClassic,
			DeadLetteredFrom: []string{ordersMain},
			Messages:         parked,
		}},
		depths: depths,
	}, nil
}

// runOrderWorker consumes orders.main.q until it has handled expect
// deliveries, the retries included.
func runOrderWorker(ctx context.Context, conn *amqp.Connection, expect int) error {
	pub, err := newPublisher(conn)
	if err != nil {
		return err
	}
	defer pub.close()
	c, err := consume(conn, ordersMain)
	if err != nil {
		return err
	}
	defer c.stop()
	for range expect {
		d, err := c.next(ctx)
		if err != nil {
			return err
		}
		if err := handleOrder(ctx, pub, d); err != nil {
			return fmt.Errorf("order worker: %s: %w", d.MessageId, err)
		}
	}
	return nil
}

func handleOrder(ctx context.Context, pub *confirmPublisher, d amqp.Delivery) error {
	var env scenarioEnvelope
	if err := json.Unmarshal(d.Body, &env); err != nil || env.SchemaVersion > orderSchemaMax {
		return d.Reject(false) // cannot be retried into shape: the queue's DLX takes it
	}
	code, text := orderFault(env)
	if code == "" {
		return d.Ack(false)
	}

	now := time.Now().UTC().Format(time.RFC3339Nano)
	retry := headerInt(d.Headers["x-retry-count"])
	out := republish(d)
	if _, ok := out.Headers["x-first-error-time"]; !ok {
		out.Headers["x-first-error-time"] = now
	}
	if retry < len(ordersRetryBuckets) {
		out.Headers["x-retry-count"] = int32(retry + 1)
		out.Headers["x-last-error"] = text
		out.Headers["x-last-error-time"] = now
		if err := pub.publish(ctx, "", ordersRetryBuckets[retry].name, out); err != nil {
			return err
		}
		return d.Ack(false)
	}

	first, _ := out.Headers["x-first-error-time"].(string)
	env.Failure = &scenarioFailure{
		ReasonCode:      code,
		Consumer:        orderWorker,
		ConsumerVersion: orderWorkerVersion,
		Attempt:         retry + 1,
		FirstFailedAt:   first,
		LastFailedAt:    now,
	}
	out.Body = mustJSON(env)
	out.Headers["x-error"] = text
	out.Headers["x-failed-at"] = now
	if err := pub.publish(ctx, ordersDLX, ordersDLQKey, out); err != nil {
		return err
	}
	return d.Ack(false)
}

// republish copies a delivery into a new publishing, headers (x-death
// included) and identity kept, as a retrying consumer does.
func republish(d amqp.Delivery) amqp.Publishing {
	h := amqp.Table{}
	for k, v := range d.Headers {
		h[k] = v
	}
	return amqp.Publishing{
		Headers:         h,
		ContentType:     d.ContentType,
		ContentEncoding: d.ContentEncoding,
		DeliveryMode:    amqp.Persistent,
		CorrelationId:   d.CorrelationId,
		MessageId:       d.MessageId,
		Timestamp:       d.Timestamp,
		Type:            d.Type,
		AppId:           d.AppId,
		Body:            d.Body,
	}
}

// headerInt reads an AMQP integer of any width; anything else is 0.
func headerInt(v any) int {
	switch n := v.(type) {
	case int8:
		return int(n)
	case uint8:
		return int(n)
	case int16:
		return int(n)
	case uint16:
		return int(n)
	case int32:
		return int(n)
	case uint32:
		return int(n)
	case int64:
		return int(n)
	case int:
		return n
	}
	return 0
}

func orderEvents(now time.Time) []amqp.Publishing {
	const app = "storefront"
	order := func(n int, taxProfile string) map[string]any {
		return map[string]any{
			"order_id":    fmt.Sprintf("ORD-%d", 90000+n),
			"customer_id": fmt.Sprintf("cus_22%02d", n),
			"tax_profile": taxProfile,
			"total":       map[string]any{"value": 315000 * n, "currency": "VND"},
		}
	}
	var ms []amqp.Publishing
	add := func(id, ev string, schema int, data map[string]any) {
		_, p := event(now, app, id, ev, schema, data)
		ms = append(ms, p)
	}
	d := order(1, "")
	d["contact"] = map[string]any{"email": ScenarioEmail, "phone": "+84 90 123 4567"}
	add("ord-0001", "order.placed", 3, d)
	add("ord-0002", "order.placed", 3, order(2, ""))
	add("ord-0003", "customer.address.updated", 3, map[string]any{
		"customer_id": "cus_2203",
		"address":     map[string]any{"line1": "12 Nguyễn Huệ", "city": "TP. Hồ Chí Minh", "postcode": ""},
	})
	add("ord-0004", "order.placed", 3, order(4, "vn-vat-standard"))
	add("ord-0005", "order.placed", 4, order(5, "vn-vat-standard"))
	return ms
}
