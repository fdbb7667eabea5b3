package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// TestFullScanStreamsTheQueueThroughItsGroups: dlqt fullscan of 30,000 ×
// 1 KiB groups every message while it moves them, keeping none: the live
// heap grows by a window of messages and the groups, far less than the
// 30 MiB of bodies (it used to keep every message and its analysis), and
// the queue ends with all of them.
func TestFullScanStreamsTheQueueThroughItsGroups(t *testing.T) {
	isolate(t)
	cfg := brokertest.NewVhost(t, "clifullscan")
	conn, err := cfg.DialVhost()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("parking", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	const n = 30000
	pad := strings.Repeat("p", 1000)
	var last *amqp.DeferredConfirmation
	for i := range n {
		body := fmt.Sprintf(`{"failure":{"reason_code":"E%d"},"pad":%q}`, i%3, pad)
		if last, err = ch.PublishWithDeferredConfirmWithContext(context.Background(), "", "parking", false, false,
			amqp.Publishing{MessageId: fmt.Sprintf("m-%05d", i), ContentType: "application/json", Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
	}
	if !last.Wait() {
		t.Fatal("publish not confirmed")
	}
	brokertest.WaitDepth(t, conn, "parking", n)

	stop := make(chan struct{})
	grew := brokertest.LiveHeapGrowth(stop)
	out, errOut, code := run(t, Assets{}, "--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost,
		"fullscan", "parking", "--yes", "--json", "--window", "256")
	close(stop)
	peak := grew()
	if code != 0 {
		t.Fatalf("fullscan: exit %d: %s", code, errOut)
	}
	var rows []GroupRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("fullscan --json: %v: %s", err, out)
	}
	total := 0
	for _, r := range rows {
		total += r.Count
	}
	if total != n || len(rows) != 3 {
		t.Fatalf("groups count %d messages in %d groups, want %d in 3", total, len(rows), n)
	}
	t.Logf("fullscan of %d × 1 KiB: live heap grew by at most %.1f MiB", n, float64(peak)/(1<<20))
	const bound = 12 << 20
	if peak > bound {
		t.Errorf("the live heap grew by %.1f MiB during a full scan of %d × 1 KiB, want < %d MiB: it keeps what it reads", float64(peak)/(1<<20), n, bound>>20)
	}
	brokertest.WaitDepth(t, conn, "parking", n)
}
