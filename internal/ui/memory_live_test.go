package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// TestMessagesScreenOfLargeBodiesKeepsToTheMemoryBudget: the TUI (and each
// TUI session of dlqt serve, which runs many in one process) opening a
// queue of 90 × 1 MiB and its messages screen with a 16 MiB budget grows
// the live heap by about the budget: the read keeps index entries, and the
// broker may push a quarter of the budget ahead of it. Before, a queue
// whose statistics had no size yet got a first window of 64 messages, 64
// MiB of bodies pushed into the client at once.
func TestMessagesScreenOfLargeBodiesKeepsToTheMemoryBudget(t *testing.T) {
	const n, budget = 90, 32 << 20
	cfg := brokertest.NewVhost(t, "uimembudget")
	conn := brokertest.Dial(t, cfg)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if _, err := ch.QueueDeclare("orders.parking", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("p", 1<<20)
	for i := range n {
		body := fmt.Sprintf(`{"failure":{"reason_code":"E%d"},"pad":%q}`, i%3, pad)
		if err := ch.PublishWithContext(context.Background(), "", "orders.parking", false, false,
			amqp.Publishing{MessageId: fmt.Sprintf("m-%03d", i), ContentType: "application/json", Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
	}
	brokertest.WaitDepth(t, conn, "orders.parking", n)
	live, err := broker.Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	stop := make(chan struct{})
	grew := brokertest.LiveHeapGrowth(stop)
	h := newHarness(t, Options{Reader: live, Vhost: cfg.Vhost, MemoryBudget: budget, Spill: SpillOptions{Dir: t.TempDir()}}, 120, 40)
	h.openQueue("orders.parking")
	h.press("open") // the first group's messages
	close(stop)
	peak := grew()
	insp := h.m.groups.Inspection()
	if insp == nil || insp.Batch.Count() != n || h.m.c.focus != screenMessages {
		t.Fatalf("read %v, screen %d", insp, h.m.c.focus)
	}
	t.Logf("the TUI's messages screen of %d × 1 MiB, %d MiB budget: the live heap grew by at most %.1f MiB", n, budget>>20, float64(peak)/(1<<20))
	if peak > 2*budget {
		t.Errorf("the live heap grew by %.1f MiB reading %d × 1 MiB with a budget of %d MiB", float64(peak)/(1<<20), n, budget>>20)
	}
	brokertest.WaitDepth(t, conn, "orders.parking", n)
}
