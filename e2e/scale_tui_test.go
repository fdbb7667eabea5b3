package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
)

// deepSnapshot writes a snapshot whose parking queues the broker said were
// 100,000 and 1,234,567 deep, with the first n messages of the first read
// (one group): depths of a real incident without loading them.
func deepSnapshot(t *testing.T, n int) string {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	msgs := make([]triage.Message, n)
	for i := range msgs {
		at := now.Add(-time.Duration(n-i) * time.Second)
		msgs[i] = triage.Message{Queue: "orders.parking", Exchange: "dlx", RoutingKey: "orders", Position: i,
			Body: []byte(fmt.Sprintf(`{"message_id":"ord-%06d","event_type":"order.created","failure":{"reason_code":"address_invalid"}}`, i)),
			Headers: triage.Headers{
				"x-death": []any{triage.Headers{"queue": "orders", "reason": "rejected", "count": int64(1), "time": at,
					"exchange": "", "routing-keys": []any{"orders"}}},
				"x-first-death-queue": "orders", "x-first-death-reason": "rejected", "x-first-death-exchange": "",
			},
			Properties: triage.Properties{MessageID: fmt.Sprintf("ord-%06d", i), ContentType: "application/json"}}
	}
	top := triage.Topology{
		Vhost:     "scale",
		Exchanges: []triage.Exchange{{Name: "dlx", Type: "fanout"}},
		Queues: []triage.Queue{
			{Name: "orders", Type: triage.QueueClassic, DeadLetterExchange: "dlx", HasDeadLetterExchange: true},
			{Name: "orders.parking", Type: triage.QueueClassic, Messages: 100_000},
			{Name: "bulk.parking", Type: triage.QueueClassic, Messages: 1_234_567},
		},
		Bindings: []triage.Binding{{Source: "dlx", Destination: "orders.parking", DestinationType: "queue"}},
	}
	snap := filepath.Join(t.TempDir(), "deep.snapshot.json.gz")
	err := broker.WriteSnapshotFile(snap, broker.SnapshotFile{Format: broker.SnapshotFormat, Source: "test", TakenAt: now,
		Topology: top, Batches: []triage.Batch{{Vhost: "scale", Queue: "orders.parking", Depth: 100_000, Limit: n,
			TakenAt: now, Messages: msgs}}})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestTUIDeepQueuesShowTheirDepthWhole: at 120 columns a depth of 100,000
// (and of 1,234,567) shows whole, where it was cut to "100,0…"; a group
// of 10,000 messages scrolls to its last at once.
func TestTUIDeepQueuesShowTheirDepthWhole(t *testing.T) {
	snap := deepSnapshot(t, 10_000)
	s := startTerm(t, 120, 30, isolatedEnv(t), "--snapshot", snap)
	scr := s.waitFor("orders.parking", "bulk.parking")
	for _, want := range []string{"100,000", "1,234,567"} {
		if !strings.Contains(scr, want) {
			t.Fatalf("depth %s not whole at 120 columns:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "100,0…") {
		t.Fatalf("a depth is cut:\n%s", scr)
	}
	s.keys("Down") // the deepest leads: bulk.parking, then orders.parking
	s.waitFor("orders.parking: ")
	s.keys("Enter")
	s.waitFor("10,000 of 100,000 messages", "10,000")
	s.keys("Enter")
	s.waitFor("ord-000000")
	s.keys("End")
	s.waitFor("› ", "ord-009999")
}
