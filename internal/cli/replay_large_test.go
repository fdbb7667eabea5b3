package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// largeParked makes a vhost of its own with a queue "parking" holding one
// message of about size bytes, m-1, whose original route is queue "dest",
// and returns the size its body has. 4.x refuses a message over 16 MiB by
// default: there it is 15 MiB.
func largeParked(t *testing.T, prefix string, size int) (argsOf func(...string) []string, conn *amqp.Connection, bodySize int) {
	t.Helper()
	cfg, conn, ch := parkingQueue(t, prefix)
	if v, _ := conn.Properties["version"].(string); !strings.HasPrefix(v, "3.") {
		size = 15 << 20
	}
	if _, err := ch.QueueDeclare("dest", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	body := []byte(fmt.Sprintf(`{"failure":{"reason_code":"E1"},"pad":%q}`, strings.Repeat("p", size)))
	dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", "parking", false, false, amqp.Publishing{
		MessageId: "m-1", ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: body,
		Headers: amqp.Table{"x-original-exchange": "", "x-original-routingKey": "dest"}})
	if err != nil || !dc.Wait() {
		t.Fatalf("publish: %v", err)
	}
	brokertest.WaitDepth(t, conn, "parking", 1)
	flags := []string{"--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost}
	return func(args ...string) []string { return append(append([]string{}, flags...), args...) }, conn, len(body)
}

// rawMove is the least amqp091-go takes to move queue's first message
// through a publish: get it, publish it (confirmed) to "" key to, ack it.
func rawMove(t *testing.T, conn *amqp.Connection, queue, to string) {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	d, ok, err := ch.Get(queue, false)
	if err != nil || !ok {
		t.Fatalf("get: %v, %v", ok, err)
	}
	dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", to, true, false, amqp.Publishing{
		Headers: d.Headers, MessageId: d.MessageId, ContentType: d.ContentType, DeliveryMode: d.DeliveryMode, Body: d.Body})
	if err != nil || !dc.Wait() {
		t.Fatalf("publish: %v", err)
	}
	if err := d.Ack(false); err != nil {
		t.Fatal(err)
	}
}

// allocated is what f allocates (MemStats.TotalAlloc: garbage included,
// which is what lets RSS grow past the live heap).
func allocated(f func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// TestReplayOfALargeMessageCostsLessThanARawReceive refuses one 32 MiB
// message under a --memory-budget its replay would not keep to, then
// replays it the way a responder does (dlqt replay QUEUE --id ID --yes: the
// read for the plan, the hold, the publish, its confirm, the ack) and
// compares what that allocates with the least amqp091-go itself takes to
// get, publish and ack the same message on one connection.
//
// amqp091-go grows a delivery's body frame by frame from 128 KiB (see
// broker.receiveExactBodies): 5.5 times the body for each receive, and a
// replay receives the message twice (the plan's read hashes it, the hold
// publishes it). Before: dlqt allocated 468.9 MiB for a 32 MiB message,
// 2.01 times the raw move (232.8 MiB), and the live heap grew by 72.5 MiB;
// after: 179.3 MiB, 0.77 times, and 40.6 MiB (on 4.x, 15 MiB: 0.74 times).
// What is left is amqp091-go's: the body once per receive and its frames.
// Since the plan's read and the hold keep messages on disk (spill.File,
// the hold's store) the body is read back from there once more, for the
// publish: 213.2 MiB, 0.92 times.
func TestReplayOfALargeMessageCostsLessThanARawReceive(t *testing.T) {
	isolate(t)
	args, conn, size := largeParked(t, "clireplaylarge", 32<<20)

	// A budget the message's replay would not keep to: refused before
	// anything is held, saying what it takes and what budget would do.
	stdout, stderr, code := run(t, Assets{}, args("--memory-budget", "8MiB", "replay", "parking", "--id", "m-1", "--yes",
		"--canary", "1", "--observe", "100ms", "--baseline", "0s")...)
	need := (int64(size) + 1<<20 - 1) >> 20
	if want := fmt.Sprintf("nothing is replayed: pass --memory-budget %dMiB or more", need); code == 0 ||
		!strings.Contains(stdout, want) || !strings.Contains(stderr, want) {
		t.Fatalf("replay of a %d-byte message with an 8 MiB budget: exit %d, want a refusal saying %q\n%s\n%s", size, code, want, stdout, stderr)
	}
	brokertest.WaitDepth(t, conn, "parking", 1)
	brokertest.WaitDepth(t, conn, "dest", 0)

	raw := allocated(func() { rawMove(t, conn, "parking", "parking") }) // it stays parked, as a new message
	brokertest.WaitDepth(t, conn, "parking", 1)

	limit := debug.SetMemoryLimit(-1)
	stop := make(chan struct{})
	grew := brokertest.LiveHeapGrowth(stop)
	start := time.Now()
	dlqt := allocated(func() {
		stdout, stderr, code = run(t, Assets{}, args("replay", "parking", "--id", "m-1", "--yes",
			"--canary", "1", "--observe", "100ms", "--baseline", "0s")...)
	})
	close(stop)
	peak := grew()
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s\n%s", code, stdout, stderr)
	}
	brokertest.WaitDepth(t, conn, "dest", 1)
	brokertest.WaitDepth(t, conn, "parking", 0)
	if after := debug.SetMemoryLimit(-1); after != limit {
		t.Errorf("the replay left the soft memory limit at %d, was %d", after, limit)
	}
	// Under the default budget, which nobody chose, the plan says what it
	// takes and the replay goes on.
	if warned := strings.Contains(stdout, "larger than the default memory budget 64.0 MiB"); warned != (size > 64<<20) {
		t.Errorf("a %d-byte message under the default 64 MiB budget: warned %v\n%s", size, warned, stdout)
	}
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	t.Logf("replay of one %.1f MiB message in %s: dlqt allocated %.1f MiB (%.2f × the body), a raw get+publish+ack %.1f MiB (%.2f ×): %.2f × raw; the live heap grew by at most %.1f MiB",
		mib(int64(size)), time.Since(start).Round(time.Millisecond), mib(dlqt), float64(dlqt)/float64(size), mib(raw), float64(raw)/float64(size),
		float64(dlqt)/float64(raw), mib(peak))
	if dlqt > raw {
		t.Errorf("a replay of one %.1f MiB message allocated %.1f MiB, %.2f times what amqp091-go takes to get, publish and ack it (%.1f MiB)",
			mib(int64(size)), mib(dlqt), float64(dlqt)/float64(raw), mib(raw))
	}
}

// The headless replay's soft memory limit: twice the budget, as a read
// takes, or the largest message when that is more, and 64 MiB for the rest.
func TestReplayMemoryLimitMakesRoomForTheLargestMessage(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ budget, largest, want int64 }{
		{0, 0, 192 * mib},         // the default budget, 64 MiB
		{0, 32 * mib, 192 * mib},  // within it
		{0, 128 * mib, 192 * mib}, // as large as twice the budget
		{0, 200 * mib, 264 * mib}, // held whole
		{128 * mib, 128 * mib, 320 * mib},
	} {
		if got := replayMemoryLimit(c.budget, c.largest); got != c.want {
			t.Errorf("replayMemoryLimit(%d MiB, %d MiB) = %d MiB, want %d", c.budget/mib, c.largest/mib, got/mib, c.want/mib)
		}
	}
	// A discard holds no message whole: the limit of a replay of small ones.
	for _, c := range []struct{ budget, want int64 }{{0, 192 * mib}, {128 * mib, 320 * mib}} {
		if got := discardMemoryLimit(c.budget, 1<<30); got != c.want {
			t.Errorf("discardMemoryLimit(%d MiB) = %d MiB, want %d", c.budget/mib, got/mib, c.want/mib)
		}
	}
}
