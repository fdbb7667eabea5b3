package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// TestTUIGroupsCountTheWholeQueuePast10000: the TUI reads a 12,000-message
// parking queue whole by default (it stopped at 10,000), its groups count
// every message, a message opened from them is read back from the spill
// file (which has no name once made), the queue is left as it was, and
// nothing is left in the cache directory when dlqt quits.
func TestTUIGroupsCountTheWholeQueuePast10000(t *testing.T) {
	const n, queue = 12_000, "scale.dlq"
	cfg := brokertest.NewVhost(t, "tui-spill")
	conn := brokertest.Dial(t, cfg)
	loadParked(t, conn, queue, n)
	brokertest.WaitDepth(t, conn, queue, n)

	env := brokerEnv(t, cfg)
	home := strings.TrimPrefix(env[0], "HOME=")
	cache := filepath.Join(home, ".cache", "dlqt")
	s := startTerm(t, 120, 30, env, "--journal", filepath.Join(t.TempDir(), "journal.db"), "--queue", queue)
	scr := s.waitFor("all 12,000 messages", "VALIDATION_FAILED", "UPSTREAM_5XX")
	if strings.Count(scr, "3,000") != 4 { // four codes, 3,000 each: every message counted
		t.Fatalf("groups do not add up to 12,000:\n%s", scr)
	}
	// one spill file, open and already unlinked: nothing of the queue
	// stays on disk, however dlqt ends
	if files, _ := filepath.Glob(filepath.Join(cache, "*")); len(files) != 0 || s.openUnder(cache) != 1 {
		t.Fatalf("spill files in %s: %v named, %d open; want one open and none named", cache, files, s.openUnder(cache))
	}
	s.keys("Enter") // the first group's messages
	s.waitFor("scale-0")
	s.keys("End", "Enter") // its last message, read back from disk
	scr = s.waitFor("payload (153 bytes", `"message_id": "scale-0`)
	if !strings.Contains(scr, "attempt timeline (2 events)") {
		t.Fatalf("the message screen lacks the timeline read back:\n%s", scr)
	}
	s.keys("q")
	deadline := time.Now().Add(10 * time.Second)
	for !s.exited() {
		if time.Now().After(deadline) {
			t.Fatalf("dlqt did not quit:\n%s", s.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "*")); len(files) != 0 {
		t.Errorf("spill files left after quitting: %v", files)
	}
	brokertest.WaitDepth(t, conn, queue, n) // everything released, nothing taken
}

// loadParked publishes n small parked messages with publisher confirms.
func loadParked(t *testing.T, conn *amqp.Connection, queue string, n int) {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if _, err := ch.QueueDeclare(queue, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	codes := []string{"VALIDATION_FAILED", "TIMEOUT", "NOT_FOUND", "UPSTREAM_5XX"}
	died := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	var last *amqp.DeferredConfirmation
	for i := range n {
		id := fmt.Sprintf("scale-%06d", i)
		body := fmt.Sprintf(`{"message_id":%q,"event_type":"order.placed","failure":{"reason_code":%q},"data":{"pad":"%s"}}`,
			id, codes[i%len(codes)], strings.Repeat("x", 40))
		last, err = ch.PublishWithDeferredConfirm("", queue, false, false, amqp.Publishing{
			MessageId: id, ContentType: "application/json", Body: []byte(body),
			Headers: amqp.Table{"x-death": []any{amqp.Table{"queue": "orders", "reason": "rejected", "count": int64(1),
				"time": died, "exchange": "orders.x", "routing-keys": []any{"order.placed"}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if i%2000 == 1999 && !last.Wait() {
			t.Fatalf("broker nacked message %d", i)
		}
	}
	if !last.Wait() {
		t.Fatal("broker nacked the last messages")
	}
}
