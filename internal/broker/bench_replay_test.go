package broker_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// BenchmarkReplayLarge replays one large message the way dlqt replay does
// (a browse for the plan, the hold, the publish, its confirm, the ack) and
// moves the same message with the least amqp091-go takes (get, publish,
// confirm, ack on one plain connection), and reports for each what it
// allocated per byte of body and the process's peak RSS above where it
// started (VmHWM, reset before each through /proc/self/clear_refs), also
// per byte of body. 32 MiB, and 128 MiB on 3.x (RabbitMQ 4.x refuses a
// message over 16 MiB by default: there 15 MiB only).
func BenchmarkReplayLarge(b *testing.B) {
	f := newFixture(b, "benchlarge")
	sizes := []int{32 << 20, 128 << 20}
	if brokerOf(b, f.live()).Version.AtLeast(4, 0) {
		sizes = []int{15 << 20}
	}
	f.declare("parked", nil)
	f.declare("dest", nil)
	l := f.live()
	// Deleted before the vhost: deleting a vhost whose durable queues saw
	// 128 MiB messages took the management API past its client timeout.
	b.Cleanup(func() {
		for _, q := range []string{"parked", "dest"} {
			_, _ = f.ch.QueueDelete(q, false, false, false)
		}
	})
	purge := func() {
		f.waitDepth("dest", 1)
		if _, err := f.ch.QueuePurge("dest", false); err != nil {
			b.Fatal(err)
		}
	}
	for _, size := range sizes {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			var dlqtAlloc, rawAlloc, dlqtRSS, rawRSS int64
			n := int64(0)
			for b.Loop() {
				n++
				id := f.publish("parked", 1, size)[0]
				f.waitDepth("parked", 1)
				a, rss := measureRun(func() { replayOne(b, l, id) })
				dlqtAlloc, dlqtRSS = dlqtAlloc+a, max(dlqtRSS, rss)
				purge()

				f.publish("parked", 1, size)
				f.waitDepth("parked", 1)
				a, rss = measureRun(func() { rawReplay(b, f.conn, "parked", "dest") })
				rawAlloc, rawRSS = rawAlloc+a, max(rawRSS, rss)
				purge()
			}
			body := float64(size)
			b.ReportMetric(float64(dlqtAlloc)/float64(n)/body, "dlqt-alloc/B")
			b.ReportMetric(float64(rawAlloc)/float64(n)/body, "raw-alloc/B")
			b.ReportMetric(float64(dlqtRSS)/body, "dlqt-peakRSS/B")
			b.ReportMetric(float64(rawRSS)/body, "raw-peakRSS/B")
			b.ReportMetric(float64(dlqtRSS)/(1<<20), "dlqt-peakRSS-MiB")
			b.ReportMetric(float64(rawRSS)/(1<<20), "raw-peakRSS-MiB")
		})
	}
}

// replayOne is what dlqt replay does to message id of queue parked, but
// the pacing: read the queue for the plan, hold, publish to dest, confirm,
// ack.
func replayOne(b *testing.B, l *broker.Live, id string) {
	ctx := context.Background()
	batch, err := l.Browse(ctx, "parked", triage.BrowseOptions{Limit: 10})
	if err != nil || len(batch.Messages) != 1 {
		b.Fatalf("browse: %d, %v", len(batch.Messages), err)
	}
	batch = triage.Batch{} // the plan keeps ids and hashes, not bodies
	port, err := l.OpenReplay(ctx, "rp-bench-"+strconv.FormatInt(time.Now().UnixNano(), 36), "parked")
	if err != nil {
		b.Fatal(err)
	}
	defer port.Close()
	held, err := port.Hold(ctx, "parked", []string{id}, "rp-bench")
	if err != nil || len(held) != 1 {
		b.Fatalf("hold: %d, %v", len(held), err)
	}
	m, err := port.Load(ctx, held[0].ID)
	if err != nil {
		b.Fatal(err)
	}
	pc, err := port.Publish(ctx, replay.Publishing{ItemID: held[0].ID, Route: triage.Route{RoutingKey: "dest"}, Message: m})
	if err != nil {
		b.Fatal(err)
	}
	if res := pc.Wait(ctx); !res.Confirmed {
		b.Fatalf("publish: %s", res.Why)
	}
	if err := port.Ack(ctx, []string{held[0].ID}); err != nil {
		b.Fatal(err)
	}
}

// rawReplay moves queue's first message to "" key to with amqp091-go alone.
func rawReplay(b *testing.B, conn *amqp.Connection, queue, to string) {
	ch, err := conn.Channel()
	if err != nil {
		b.Fatal(err)
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		b.Fatal(err)
	}
	d, ok, err := ch.Get(queue, false)
	if err != nil || !ok {
		b.Fatalf("get: %v, %v", ok, err)
	}
	dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", to, true, false, amqp.Publishing{
		Headers: d.Headers, MessageId: d.MessageId, ContentType: d.ContentType, DeliveryMode: d.DeliveryMode, Body: d.Body})
	if err != nil || !dc.Wait() {
		b.Fatalf("publish: %v", err)
	}
	if err := d.Ack(false); err != nil {
		b.Fatal(err)
	}
}

// measureRun is what fn allocates and how far the process's peak RSS rose
// above its RSS before (0 when /proc cannot tell).
func measureRun(fn func()) (allocated, peakRSS int64) {
	debug.FreeOSMemory()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // VmHWM := VmRSS
	start := procStatus("VmRSS")
	fn()
	peak := procStatus("VmHWM")
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc), max(peak-start, 0)
}

// procStatus is a field of /proc/self/status in bytes (0 if unknown).
func procStatus(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
