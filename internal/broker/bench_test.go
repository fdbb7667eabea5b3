package broker_test

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

const (
	benchMessages = 10000
	benchSize     = 1024
)

// BenchmarkBrowse compares dlqt's Browse with the least a raw amqp091-go
// reader can do for the same result (consume, cancel, one Nack(multiple,
// requeue)) on a queue of 10,000 1 KiB messages filled once. dlqt/raw says
// what the safety and conversion cost; 1 would be free.
func BenchmarkBrowse(b *testing.B) {
	f := newFixture(b, "bench")
	f.declare("bench.dlq", nil)
	f.publish("bench.dlq", benchMessages, benchSize)
	l := f.live()
	ctx := context.Background()

	var dlqtTime, rawTime time.Duration
	var dlqtRead, rawRead int
	for b.Loop() {
		start := time.Now()
		batch, err := l.Browse(ctx, "bench.dlq", triage.BrowseOptions{Limit: benchMessages})
		dlqtTime += time.Since(start)
		if err != nil || len(batch.Messages) != benchMessages {
			b.Fatalf("dlqt read %d, %v", len(batch.Messages), err)
		}
		dlqtRead += len(batch.Messages)
		f.waitDepth("bench.dlq", benchMessages)

		start = time.Now()
		n := rawBrowse(b, f.conn, "bench.dlq", benchMessages)
		rawTime += time.Since(start)
		rawRead += n
		f.waitDepth("bench.dlq", benchMessages)
	}
	dlqtRate := float64(dlqtRead) / dlqtTime.Seconds()
	rawRate := float64(rawRead) / rawTime.Seconds()
	b.ReportMetric(dlqtRate, "dlqt-msg/s")
	b.ReportMetric(rawRate, "raw-msg/s")
	b.ReportMetric(dlqtRate/rawRate, "dlqt/raw")
}

func rawBrowse(b *testing.B, conn *amqp.Connection, queue string, n int) int {
	ch, err := conn.Channel()
	if err != nil {
		b.Fatal(err)
	}
	defer ch.Close()
	if err := ch.Qos(n, 0, false); err != nil {
		b.Fatal(err)
	}
	deliveries, err := ch.Consume(queue, "raw", false, false, false, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	var last uint64
	read := 0
	for d := range deliveries {
		last = d.DeliveryTag
		if read++; read == n {
			break
		}
	}
	if err := ch.Cancel("raw", false); err != nil {
		b.Fatal(err)
	}
	for d := range deliveries {
		last = max(last, d.DeliveryTag)
	}
	if err := ch.Nack(last, true, true); err != nil {
		b.Fatal(err)
	}
	return read
}
