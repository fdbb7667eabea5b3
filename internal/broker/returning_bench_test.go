package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// BenchmarkReadRightAfterARead is what a read begun the moment a read of
// 100,000 small messages ended costs (the broker returns the first read's
// messages in steps, and the second read waits for them, returning.go),
// beside a read of the same queue once it is settled: after-read-s and
// settled-read-s per read, back-at-start the messages ready as the second
// read began.
func BenchmarkReadRightAfterARead(b *testing.B) {
	const n = 100_000
	f := newFixture(b, "bench-reread")
	f.fillSmall("orders.dlq", n)
	ctx := context.Background()
	all := triage.BrowseOptions{Each: func(triage.Message) error { return nil }}
	read := func(who string, l interface {
		Browse(context.Context, string, triage.BrowseOptions) (triage.Batch, error)
	}) time.Duration {
		start := time.Now()
		batch, err := l.Browse(ctx, "orders.dlq", all)
		took := time.Since(start)
		if err != nil || batch.Read != n {
			b.Fatalf("%s read %d of %d: %v", who, batch.Read, n, err)
		}
		return took
	}
	var after, settled time.Duration
	var back int
	for b.Loop() {
		first, second := f.live(), f.live()
		read("first", first)
		if err := first.Close(); err != nil {
			b.Fatal(err)
		}
		back += f.depth("orders.dlq")
		after += read("second", second)
		f.waitDepth("orders.dlq", n)
		settled += read("settled", second)
		f.waitDepth("orders.dlq", n)
		if err := second.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(after.Seconds()/float64(b.N), "after-read-s")
	b.ReportMetric(settled.Seconds()/float64(b.N), "settled-read-s")
	b.ReportMetric(float64(back)/float64(b.N), "back-at-start")
}
