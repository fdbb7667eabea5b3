package broker

import (
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

func TestTheFirstWindowIsSmall(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name      string
		budget    int64
		q         triage.Queue
		wantFirst int
		wantAhead int64
	}{
		{"1 KiB messages, default budget", 0, triage.Queue{Messages: 100000, Bytes: 100000 * 1024}, firstWindow, 16 * mib},
		// RabbitMQ 4.x reports 0 messages and 0 bytes for a queue declared
		// a moment ago, whatever it holds.
		{"statistics not emitted yet", 0, triage.Queue{}, unknownFirstWindow, 16 * mib},
		{"1 MiB messages", 64 * mib, triage.Queue{Messages: 10, Bytes: 10 * mib}, 15, 16 * mib},
		{"huge messages", 4 * mib, triage.Queue{Messages: 2, Bytes: 40 * mib}, 1, mib},
		{"a tiny budget", 1, triage.Queue{}, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			first, ahead := memoryWindow(c.budget, c.q)
			if first != c.wantFirst || ahead != c.wantAhead {
				t.Errorf("memoryWindow(%d, %d messages / %d bytes) = %d, %d; want %d, %d",
					c.budget, c.q.Messages, c.q.Bytes, first, ahead, c.wantFirst, c.wantAhead)
			}
		})
	}
}

// The windows after the first follow what the deliveries read cost, body
// and headers, not the statistics: a queue whose statistics lag, say
// nothing yet or count bodies only cannot make a window push more than its
// share of the budget past the reader.
func TestWindowsFollowWhatTheDeliveriesCost(t *testing.T) {
	const mib = 1 << 20
	xdeath := amqp.Table{
		"x-death": []any{amqp.Table{"count": int64(1), "reason": "rejected", "queue": "orders.work",
			"exchange": "orders", "routing-keys": []any{"order.created"}}},
		"x-first-death-queue": "orders.work", "x-first-death-reason": "rejected",
	}
	trace := amqp.Table{"x-exception-stacktrace": strings.Repeat("x", 100<<10)}
	cases := []struct {
		name    string
		stats   triage.Queue
		body    int
		headers amqp.Table
	}{
		{"no statistics yet, 1 KiB bodies", triage.Queue{}, 1024, nil},
		{"no statistics yet, 1 MiB bodies", triage.Queue{}, mib, nil},
		{"statistics say 1 KiB, the queue holds 256 KiB", triage.Queue{Messages: 10, Bytes: 10240}, 256 << 10, nil},
		{"statistics say 1 MiB, the queue holds empty bodies", triage.Queue{Messages: 10, Bytes: 10 * mib}, 0, nil},
		{"dead letters: 1 KiB bodies and their x-death", triage.Queue{Messages: 10, Bytes: 10240}, 1024, xdeath},
		{"a 100 KiB header, a tiny body", triage.Queue{Messages: 10, Bytes: 20}, 2, trace},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			size, ahead := memoryWindow(0, c.stats)
			w := newWindow(nil, "q", nil, size, 1_000_000)
			w.ahead = ahead
			w.granted = w.nextCredit()
			d := amqp.Delivery{Body: make([]byte, c.body), Headers: c.headers}
			var ready []amqp.Delivery
			for tag := uint64(1); tag <= uint64(min(w.granted, 50)); tag++ {
				d.DeliveryTag = tag
				ready = w.order(d, ready[:0])
			}
			cost := int64(c.body) + tableCost(c.headers) + deliveryBase
			want := int(max(1, min(ahead/cost, 65535)))
			if got := w.nextCredit(); got != want {
				t.Errorf("second window %d messages, want %d (%d bytes a delivery)", got, want, cost)
			}
			if inFlight := int64(w.size) * cost; inFlight > ahead && w.size > 1 {
				t.Errorf("a window of %d × %d bytes is %d bytes, past the %d allowed", w.size, cost, inFlight, ahead)
			}
		})
	}
}

// What a delivery's headers cost is counted: an x-death is about a
// kilobyte in the client, a 100 KiB header its 100 KiB.
func TestTableCost(t *testing.T) {
	xdeath := amqp.Table{"x-death": []any{amqp.Table{"count": int64(1), "reason": "rejected", "queue": "orders.work",
		"exchange": "orders", "routing-keys": []any{"order.created"}}}}
	if c := tableCost(xdeath); c < 500 || c > 2000 {
		t.Errorf("an x-death costs %d bytes, want about a kilobyte", c)
	}
	if c := tableCost(amqp.Table{"k": strings.Repeat("x", 100<<10)}); c < 100<<10 {
		t.Errorf("a 100 KiB header costs %d bytes", c)
	}
	if c := tableCost(nil); c != 0 {
		t.Errorf("no headers cost %d", c)
	}
}

// A window without ahead (a browse that keeps everything it reads) keeps
// its size.
func TestFixedWindowKeepsItsSize(t *testing.T) {
	w := newWindow(nil, "q", nil, 500, 2000)
	w.order(amqp.Delivery{DeliveryTag: 1, Body: make([]byte, 1<<20)}, nil)
	if got := w.nextCredit(); got != 500 {
		t.Errorf("credit %d, want 500", got)
	}
}
