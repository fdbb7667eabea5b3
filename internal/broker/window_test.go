package broker_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/triage"
	amqp "github.com/rabbitmq/amqp091-go"
)

// streamedIDs browses queue handing every message to Each and returns their
// ids in the order they came, checking positions as it goes.
func streamedIDs(t *testing.T, f *fixture, queue string, budget int64) ([]string, triage.Batch) {
	t.Helper()
	var ids []string
	b, err := f.live().Browse(context.Background(), queue, triage.BrowseOptions{
		Limit:        0, // the whole queue, as the broker's memory allows
		MemoryBudget: budget,
		Each: func(m triage.Message) error {
			if m.Position != len(ids) {
				t.Errorf("message %s at position %d, want %d", m.Properties.MessageID, m.Position, len(ids))
			}
			ids = append(ids, m.Properties.MessageID)
			return nil
		},
	})
	if err != nil {
		t.Fatalf("Browse: %v", err)
	}
	if len(b.Messages) != 0 || b.Read != len(ids) {
		t.Fatalf("a streamed batch kept %d messages and counts %d, handed over %d", len(b.Messages), b.Read, len(ids))
	}
	return ids, b
}

// A streamed browse with a window far smaller than the queue reads through
// many consumers on one channel: every message comes once, in queue order,
// and the queue is left with the same depth and the same ids in the same
// order.
func TestBrowseStreamedInWindowsKeepsOrderAndLeavesTheQueue(t *testing.T) {
	f := newFixture(t, "window")
	f.declare("orders.dlq", nil)
	want := f.publish("orders.dlq", 3000, 100)

	ids, b := streamedIDs(t, f, "orders.dlq", 1) // the smallest window: 256
	if !slices.Equal(ids, want) {
		t.Fatalf("streamed %d ids, first differing from the %d published", len(ids), len(want))
	}
	if b.Depth != 3000 || b.Truncated() {
		t.Errorf("depth %d, truncated %v", b.Depth, b.Truncated())
	}
	f.waitDepth("orders.dlq", 3000)
	again, err := f.live().Browse(context.Background(), "orders.dlq", triage.BrowseOptions{Limit: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if got := messageIDs(again.Messages); !slices.Equal(got, want) {
		t.Fatalf("after the streamed browse the queue holds %d ids, not the %d published in order", len(got), len(want))
	}
	f.waitDepth("orders.dlq", 3000)
}

// More than 65,535 messages (the largest prefetch basic.qos takes) are held
// without an unlimited prefetch, and released in place.
func TestBrowseStreamedPastTheLargestPrefetch(t *testing.T) {
	f := newFixture(t, "window-big")
	f.declare("big.dlq", nil)
	want := f.publish("big.dlq", 70000, 0)

	ids, _ := streamedIDs(t, f, "big.dlq", 0)
	if !slices.Equal(ids, want) {
		t.Fatalf("streamed %d ids, not the %d published in order", len(ids), len(want))
	}
	f.waitDepth("big.dlq", 70000)
	again, _ := streamedIDs(t, f, "big.dlq", 0)
	if !slices.Equal(again, want) {
		t.Fatalf("the second browse read %d ids, not the %d published in order", len(again), len(want))
	}
	f.waitDepth("big.dlq", 70000)
}

// A streamed browse of large messages in a queue declared a moment ago,
// whose statistics the management API has not emitted yet (RabbitMQ 4.x
// reports 0 messages and 0 bytes for it), stays near its memory budget:
// the windows follow the sizes read, not the statistics. With a window
// sized from "0 bytes a message", a reader slower than the broker had all
// 100 MiB pushed into the client.
func TestStreamedBrowseOfLargeMessagesStaysNearItsBudget(t *testing.T) {
	const n, size, budget = 400, 256 << 10, 16 << 20
	f := newFixture(t, "window-large")
	f.declare("large.dlq", nil)
	want := f.publish("large.dlq", n, size)

	stop := make(chan struct{})
	grew := brokertest.LiveHeapGrowth(stop)
	var ids []string
	_, err := f.live().Browse(context.Background(), "large.dlq", triage.BrowseOptions{
		MemoryBudget: budget,
		Each: func(m triage.Message) error {
			time.Sleep(5 * time.Millisecond) // a reader slower than the broker
			ids = append(ids, m.Properties.MessageID)
			return nil
		},
	})
	close(stop)
	if err != nil {
		t.Fatalf("Browse: %v", err)
	}
	peak := grew()
	t.Logf("%d × %d KiB with a %d MiB budget: the live heap grew by at most %.1f MiB", n, size>>10, budget>>20, float64(peak)/(1<<20))
	if !slices.Equal(ids, want) {
		t.Fatalf("read %d ids, not the %d published in order", len(ids), len(want))
	}
	// The first window (firstWindow × 256 KiB) is the most in flight
	// before the sizes are known; after it, a quarter of the budget.
	if peak > 2*budget {
		t.Errorf("the live heap grew by %.1f MiB reading %d × %d KiB with a budget of %d MiB", float64(peak)/(1<<20), n, size>>10, budget>>20)
	}
	f.waitDepth("large.dlq", n)
}

// Headers count as well as bodies: a dead letter's x-death tables, or an
// application's stack trace in a header, are decoded into the client's
// memory like its body. 600 messages with a 100 KiB header and a small
// body grew the live heap by about the whole 60 MiB when only bodies were
// counted, whatever the budget.
func TestStreamedBrowseCountsHeadersInItsBudget(t *testing.T) {
	const n, budget = 600, 16 << 20
	f := newFixture(t, "window-headers")
	f.declare("traces.dlq", nil)
	trace := strings.Repeat("at com.example.Orders.handle(Orders.java:42)\n", 100<<10/46)
	for i := range n {
		f.publishOne("", "traces.dlq", amqp.Publishing{MessageId: fmt.Sprintf("t-%04d", i), Body: []byte(`{}`),
			Headers: amqp.Table{"x-exception-stacktrace": trace}})
	}
	f.waitDepth("traces.dlq", n)

	stop := make(chan struct{})
	grew := brokertest.LiveHeapGrowth(stop)
	read := 0
	_, err := f.live().Browse(context.Background(), "traces.dlq", triage.BrowseOptions{
		MemoryBudget: budget,
		Each: func(triage.Message) error {
			time.Sleep(5 * time.Millisecond) // a reader slower than the broker
			read++
			return nil
		},
	})
	close(stop)
	if err != nil {
		t.Fatalf("Browse: %v", err)
	}
	peak := grew()
	t.Logf("%d messages with a %d KiB header, %d MiB budget: the live heap grew by at most %.1f MiB", n, len(trace)>>10, budget>>20, float64(peak)/(1<<20))
	if read != n {
		t.Fatalf("read %d of %d", read, n)
	}
	// As for large bodies: the first window (firstWindow × 100 KiB) and the
	// frames a header is decoded from come on top of the quarter of the
	// budget the windows may push ahead; the whole 60 MiB must not.
	if peak > 2*budget {
		t.Errorf("the live heap grew by %.1f MiB reading %d messages with %d KiB headers with a budget of %d MiB",
			float64(peak)/(1<<20), n, len(trace)>>10, budget>>20)
	}
	f.waitDepth("traces.dlq", n)
}
