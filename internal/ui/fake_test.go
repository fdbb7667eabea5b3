package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// fakeReader is an in-memory triage.Reader for the TUI's unit tests; the
// end-to-end suite runs the real broker. Like the broker reader it refuses a
// quorum queue with a delivery limit unless the cost is accepted, and it
// reports progress per message.
type fakeReader struct {
	mu       sync.Mutex
	top      triage.Topology
	messages map[string][]triage.Message
	browses  []triage.BrowseOptions // every Browse call, in order
	hold     chan struct{}          // when set, Browse waits for it to close
	// pause, when set, stops Browse after its first progress report until it
	// is closed, so a test sees a browse in flight.
	pause chan struct{}
	// failTopology makes Topology fail, as a broker that went away.
	failTopology error
}

func (f *fakeReader) Describe() string { return "fake broker 127.0.0.1:5672" }

func (f *fakeReader) Topology(context.Context) (triage.Topology, error) {
	if f.failTopology != nil {
		return triage.Topology{}, f.failTopology
	}
	return f.top, nil
}

func (f *fakeReader) Browse(ctx context.Context, queue string, opts triage.BrowseOptions) (triage.Batch, error) {
	f.mu.Lock()
	f.browses = append(f.browses, opts)
	hold, pause := f.hold, f.pause
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return triage.Batch{Queue: queue}, ctx.Err()
		}
	}
	q, ok := f.top.Queue(queue)
	if !ok {
		return triage.Batch{}, fmt.Errorf("queue %q: %w", queue, triage.ErrNotFound)
	}
	if q.Type == triage.QueueQuorum && q.DeliveryLimit > 0 && !opts.AcceptDeliveryCost {
		return triage.Batch{}, &triage.DeliveryCostError{Queue: queue, Limit: q.DeliveryLimit, Depth: q.Messages}
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = triage.DefaultBrowseLimit
	}
	all := f.messages[queue]
	b := triage.Batch{Vhost: f.top.Vhost, Queue: queue, Depth: q.Messages, Limit: limit, TakenAt: fixedNow}
	if opts.Progress != nil { // the broker reports what it expects first
		opts.Progress(0, min(len(all), limit))
	}
	for i, m := range all {
		if i >= limit {
			break
		}
		if opts.Each != nil { // streamed, as the broker does
			if err := opts.Each(m); err != nil {
				return b, err
			}
			b.Read++
		} else {
			b.Messages = append(b.Messages, m)
		}
		if opts.Progress != nil {
			opts.Progress(i+1, min(len(all), limit))
		}
		if i == 0 && pause != nil {
			<-pause
		}
	}
	return b, nil
}

func (f *fakeReader) calls() []triage.BrowseOptions {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]triage.BrowseOptions(nil), f.browses...)
}

var fixedNow = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// hostileQueue is a queue name carrying a terminal title escape: it must
// reach the screen only in its escaped form.
const hostileQueue = "evil\x1b]0;pwned\x07.dlq"

// scenario is seed 001 in memory: a work queue dead-lettering into a fanout
// parking queue, a quorum parking queue with a delivery limit, a queue found
// by name only, and a parking queue with a hostile name.
func scenario() *fakeReader {
	top := triage.Topology{
		Vhost: "shop",
		Exchanges: []triage.Exchange{
			{Name: "orders", Type: "direct"},
			{Name: "orders.dlx", Type: "fanout"},
			{Name: "payments.dlx", Type: "fanout"},
		},
		Queues: []triage.Queue{
			{Name: "orders.work", Type: triage.QueueClassic, Consumers: 2,
				DeadLetterExchange: "orders.dlx", HasDeadLetterExchange: true},
			{Name: "orders.dlq", Type: triage.QueueClassic, Messages: 5, PublishRate: 0.4,
				HeadPublished: fixedNow.Add(-3*time.Hour - 12*time.Minute)},
			{Name: "payments.work", Type: triage.QueueQuorum, Consumers: 1,
				DeadLetterExchange: "payments.dlx", HasDeadLetterExchange: true},
			{Name: "payments.parking", Type: triage.QueueQuorum, Messages: 2, DeliveryLimit: 5},
			{Name: "audit.failed", Type: triage.QueueClassic},
			{Name: hostileQueue, Type: triage.QueueClassic, Messages: 1},
		},
		Bindings: []triage.Binding{
			{Source: "orders", Destination: "orders.work", DestinationType: "queue", RoutingKey: "order.placed"},
			{Source: "orders.dlx", Destination: "orders.dlq", DestinationType: "queue"},
			{Source: "payments.dlx", Destination: "payments.parking", DestinationType: "queue"},
		},
	}
	return &fakeReader{top: top, messages: map[string][]triage.Message{
		"orders.dlq": {
			rejected("m-1001", "order.placed", "INVALID_SKU", 3, 40*time.Minute,
				`"customer":{"email":"ana@example.com","password":"hunter2"},"note":"\u001b[31mred\u001b[0m"`),
			rejected("m-1002", "order.placed", "INVALID_SKU", 2, 25*time.Minute, `"sku":"X-1"`),
			rejected("m-1003", "order.placed", "INVALID_SKU", 1, 5*time.Minute, `"sku":"X-2"`),
			rejected("m-1004", "order.cancelled", "PAYMENT_TIMEOUT", 4, 2*time.Hour, `"order":"o-9"`),
			{Queue: "orders.dlq", Position: 4, Exchange: "", RoutingKey: "orders.dlq",
				Properties: triage.Properties{MessageID: "m-1005", ContentType: "application/octet-stream"},
				Body:       []byte{0x00, 0x01, 0xfe, 0xff, 'h', 'i'}},
		},
		"payments.parking": {
			quorumDead("p-1", 3), quorumDead("p-2", 4),
		},
		hostileQueue: {
			{Queue: hostileQueue, Properties: triage.Properties{MessageID: "x-1"},
				Headers: triage.Headers{"x-note": "\x1b[2Jcleared"}, Body: []byte("plain \x1b[31mred\x1b[0m \u202eevil")},
		},
	}}
}

// rejected is a message the consumer of orders.work rejected `count` times,
// the last time `ago` before fixedNow, carrying a diagnostic envelope (failure block included).
func rejected(id, event, code string, count int64, ago time.Duration, extra string) triage.Message {
	died := fixedNow.Add(-ago)
	env := fmt.Sprintf(`{"message_id":%q,"event_type":%q,"schema_version":"2","occurred_at":%q,"correlation_id":"c-%s",`+
		`"failure":{"reason_code":%q,"consumer":"fulfilment","consumer_version":"1.4.2","attempt":%d,"last_failed_at":%q},`+
		`"data":{%s}}`, id, event, died.Add(-time.Hour).Format(time.RFC3339), id, code, count, died.Format(time.RFC3339), extra)
	return triage.Message{
		Queue: "orders.dlq", Exchange: "orders.dlx", RoutingKey: "order.placed",
		Properties: triage.Properties{MessageID: id, ContentType: "application/json", Timestamp: died.Add(-time.Hour)},
		Headers: triage.Headers{
			"x-death": []any{triage.Headers{
				"queue": "orders.work", "reason": "rejected", "count": count, "time": died,
				"exchange": "orders", "routing-keys": []any{"order.placed"},
			}},
			"x-first-death-queue":    "orders.work",
			"x-first-death-reason":   "rejected",
			"x-first-death-exchange": "orders",
			"x-api-token":            "tok_live_abcdefghijklmnop",
		},
		Body: []byte(env),
	}
}

func quorumDead(id string, deliveries int64) triage.Message {
	body, _ := json.Marshal(map[string]any{"message_id": id, "event_type": "payment.captured"})
	return triage.Message{
		Queue: "payments.parking", Exchange: "payments.dlx", RoutingKey: "payment",
		Properties: triage.Properties{MessageID: id, ContentType: "application/json"},
		Headers: triage.Headers{
			"x-delivery-count": deliveries,
			"x-death": []any{triage.Headers{
				"queue": "payments.work", "reason": "delivery_limit", "count": int64(1), "time": fixedNow.Add(-10 * time.Minute),
				"exchange": "payments", "routing-keys": []any{"payment"},
			}},
		},
		Body: body,
	}
}
