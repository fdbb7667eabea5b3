package broker

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

func TestMemoryWindowFromTheQueuesStatistics(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name      string
		budget    int64
		q         triage.Queue
		wantFirst int
		wantAhead int64
	}{
		{"1 KiB messages, default budget", 0, triage.Queue{Messages: 100000, Bytes: 100000 * 1024}, 8192, 16 * mib},
		{"1 MiB messages", 64 * mib, triage.Queue{Messages: 10, Bytes: 10 * mib}, 15, 16 * mib},
		{"0 bytes reads as not known yet", 1 << 30, triage.Queue{Messages: 5, Bytes: 0}, unknownSizeWindow, 1 << 28},
		// RabbitMQ 4.x reports 0 messages and 0 bytes for a queue declared
		// a moment ago, whatever it holds: the first window stays small.
		{"statistics not emitted yet", 0, triage.Queue{}, unknownSizeWindow, 16 * mib},
		{"a tiny budget", 1, triage.Queue{}, 1, 1},
		{"huge messages", 4 * mib, triage.Queue{Messages: 2, Bytes: 40 * mib}, 1, mib},
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

// The windows after the first follow the sizes read, not the statistics:
// a queue whose statistics lag (or say nothing yet) cannot make a window
// push more than its share of the budget past the reader.
func TestWindowsFollowTheSizesRead(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name   string
		stats  triage.Queue
		body   int
		credit int // of the second consumer
	}{
		{"no statistics yet, 1 KiB bodies", triage.Queue{}, 1024, 8192},
		{"no statistics yet, 1 MiB bodies", triage.Queue{}, mib, 15},
		{"statistics say 1 KiB, the queue holds 256 KiB", triage.Queue{Messages: 10, Bytes: 10240}, 256 << 10, 63},
		{"statistics say 1 MiB, the queue holds empty bodies", triage.Queue{Messages: 10, Bytes: 10 * mib}, 0, 16384},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			size, ahead := memoryWindow(0, c.stats)
			w := newWindow(nil, "q", nil, size, 1_000_000)
			w.ahead = ahead
			w.granted = w.nextCredit()
			body := make([]byte, c.body)
			var ready []amqp.Delivery
			for tag := uint64(1); tag <= uint64(min(w.granted, 50)); tag++ {
				ready = w.order(amqp.Delivery{DeliveryTag: tag, Body: body}, ready[:0])
			}
			if got := w.nextCredit(); got != c.credit {
				t.Errorf("second window %d messages, want %d", got, c.credit)
			}
			if inFlight := int64(w.size) * int64(c.body+deliveryOverhead); inFlight > ahead {
				t.Errorf("a window of %d × %d bytes is %d bytes, past the %d allowed", w.size, c.body, inFlight, ahead)
			}
		})
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
