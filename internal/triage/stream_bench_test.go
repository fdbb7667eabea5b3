package triage

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// parkedMessage is a parked message like the ones make bench loads: a JSON
// envelope with a failure block padded to about size bytes, and an x-death.
func parkedMessage(i, size int) Message {
	died := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	codes := []string{"VALIDATION_FAILED", "TIMEOUT", "NOT_FOUND", "CONFLICT", "UPSTREAM_5XX"}
	body := fmt.Sprintf(`{"message_id":"bench-%07d","event_type":"order.placed","failure":{"reason_code":%q,"attempt":3,"last_failed_at":%q},"data":{"pad":"`,
		i, codes[i%len(codes)], died.Format(time.RFC3339Nano))
	body += strings.Repeat("x", max(size-len(body)-3, 0)) + `"}}`
	return Message{
		Queue: "bench.dlq", Position: i, Exchange: "", RoutingKey: "bench.dlq",
		Properties: Properties{MessageID: fmt.Sprintf("bench-%07d", i), ContentType: "application/json", Timestamp: died},
		Headers: Headers{"x-death": []any{Headers{
			"queue": "orders", "reason": "rejected", "count": int64(3), "time": died,
			"exchange": "orders.x", "routing-keys": []any{"order.placed"},
		}}},
		Body: []byte(body),
	}
}

// sliceReader is a Reader over messages made in memory: it streams them
// when asked, as the broker does.
type sliceReader struct {
	top  Topology
	msgs []Message
}

func (s sliceReader) Describe() string                           { return "memory" }
func (s sliceReader) Topology(context.Context) (Topology, error) { return s.top, nil }
func (s sliceReader) Browse(_ context.Context, q string, o BrowseOptions) (Batch, error) {
	b := Batch{Queue: q, Depth: len(s.msgs)}
	if o.Each == nil {
		b.Messages = s.msgs
		return b, nil
	}
	for _, m := range s.msgs {
		if err := o.Each(m); err != nil {
			return b, err
		}
		b.Read++
	}
	return b, nil
}

func benchReader(n int) sliceReader {
	top := Topology{Vhost: "/", Queues: []Queue{{Name: "bench.dlq", Type: QueueClassic}, {Name: "orders", Type: QueueClassic}}}
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i] = parkedMessage(i, 1024)
	}
	return sliceReader{top: top, msgs: msgs}
}

// BenchmarkInspectEachGroups is the headless groups path per message.
func BenchmarkInspectEachGroups(b *testing.B) {
	r := benchReader(10000)
	for b.Loop() {
		s, err := InspectEach(context.Background(), r, "bench.dlq", BrowseOptions{}, StreamOptions{
			Each: func(*Triaged) (bool, error) { return true, nil },
		})
		if err != nil || s.Matched != 10000 {
			b.Fatal(s.Matched, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10000), "ns/msg")
}
