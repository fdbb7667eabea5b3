package spill_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/spill"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// parked is a 1 KiB parked message as make bench loads them.
func parked(i int) triage.Message {
	died := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	codes := []string{"VALIDATION_FAILED", "TIMEOUT", "NOT_FOUND", "CONFLICT", "UPSTREAM_5XX"}
	body := fmt.Sprintf(`{"message_id":"bench-%07d","event_type":"order.placed","failure":{"reason_code":%q,"attempt":3},"data":{"tenant":"t-%d","pad":"`,
		i, codes[i%len(codes)], i%50)
	body += strings.Repeat("x", max(1024-len(body)-3, 0)) + `"}}`
	return triage.Message{
		Queue: "bench.dlq", Position: i, RoutingKey: "bench.dlq",
		Properties: triage.Properties{MessageID: fmt.Sprintf("bench-%07d", i), ContentType: "application/json", Timestamp: died},
		Headers: triage.Headers{"x-death": []any{triage.Headers{
			"queue": "orders", "reason": "rejected", "count": int64(3), "time": died,
			"exchange": "orders.x", "routing-keys": []any{"order.placed"},
		}}},
		Body: []byte(body),
	}
}

type reader struct{ n int }

func (reader) Describe() string { return "memory" }
func (reader) Topology(context.Context) (triage.Topology, error) {
	return triage.Topology{Vhost: "/", Queues: []triage.Queue{{Name: "bench.dlq", Type: triage.QueueClassic}, {Name: "orders", Type: triage.QueueClassic}}}, nil
}
func (r reader) Browse(_ context.Context, q string, o triage.BrowseOptions) (triage.Batch, error) {
	for i := range r.n {
		if err := o.Each(parked(i)); err != nil {
			return triage.Batch{}, err
		}
	}
	return triage.Batch{Queue: q, Depth: r.n, Read: r.n}, nil
}

// spilled streams n messages into a store as the TUI does and returns
// their index entries.
func spilled(b *testing.B, n int) ([]triage.Triaged, *spill.Store) {
	b.Helper()
	st, err := spill.Create(b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	red := redact.New()
	idx := triage.NewSpilled(st, red)
	var kept []triage.Triaged
	s, err := triage.InspectEach(context.Background(), reader{n}, "bench.dlq", triage.BrowseOptions{}, triage.StreamOptions{
		Redactor: red, Payloads: true, Each: func(t *triage.Triaged) (bool, error) {
			if err := st.Put(t.Message); err != nil {
				return false, err
			}
			kept = append(kept, idx.Index(*t))
			return true, nil
		}})
	if err != nil {
		b.Fatal(err)
	}
	idx.UseTopology(s.Topology)
	if err := st.Flush(); err != nil {
		b.Fatal(err)
	}
	return kept, st
}

// BenchmarkPut is the cost of spilling one 1 KiB message (chunked
// transactions, no fsync).
func BenchmarkPut(b *testing.B) {
	st, err := spill.Create(b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	msgs := make([]triage.Message, 1000)
	for i := range msgs {
		msgs[i] = parked(i)
	}
	i := 0
	for b.Loop() {
		m := msgs[i%len(msgs)]
		m.Position = i
		if err := st.Put(m); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkReadBackOne is what the message screen costs to open one
// message of a 100,000-message read: read from the file, decode, derive.
func BenchmarkReadBackOne(b *testing.B) {
	kept, _ := spilled(b, 100_000)
	i := 0
	for b.Loop() {
		if _, err := kept[(i*7919)%len(kept)].Whole(); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkTextFilter100k is a text~ filter over 100,000 index entries:
// resolve reads every message back on every core (the TUI runs it in a
// tea.Cmd); narrow is what Update then does with the resolved filter.
func BenchmarkTextFilter100k(b *testing.B) {
	kept, _ := spilled(b, 100_000)
	insp := triage.Inspection{Messages: kept, Groups: triage.GroupMessages(kept)}
	f, err := filter.ParseWhere([]string{"text~t-7"}, filter.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var resolved filter.Filter
	b.Run("resolve", func(b *testing.B) {
		for b.Loop() {
			if resolved, err = f.Resolve(context.Background(), triage.Slice(kept)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("narrow-resolved", func(b *testing.B) {
		for b.Loop() {
			if got := resolved.Narrow(insp); len(got.Messages) != 100_000/50 {
				b.Fatalf("text~t-7 matched %d", len(got.Messages))
			}
		}
	})
}

// BenchmarkTextFilterRetype10k is the filter bar over a read of 10,000
// index entries as a user types on: text~t-7 is resolved once, then each
// op resolves text~t-70, a key later, with the same search cache (as the
// TUI keeps one per read, 32 MiB): no message is read back or redacted
// again.
func BenchmarkTextFilterRetype10k(b *testing.B) {
	kept, _ := spilled(b, 10_000)
	cache := filter.NewSearchCache(32 << 20)
	first, err := filter.ParseWhere([]string{"text~t-7"}, filter.Options{Cache: cache})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := first.Resolve(context.Background(), triage.Slice(kept)); err != nil {
		b.Fatal(err)
	}
	next, _ := filter.ParseWhere([]string{"text~t-70"}, filter.Options{Cache: cache})
	for b.Loop() {
		if _, err := next.Resolve(context.Background(), triage.Slice(kept)); err != nil {
			b.Fatal(err)
		}
	}
}
