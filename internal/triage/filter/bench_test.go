package filter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// A filter bar re-filters on every key press: these measure one pass over
// 10,000 messages, by a field (cheap) and by text and tenant (each message's
// payload and headers redacted again).
func BenchmarkFilterApply10k(b *testing.B) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	msgs := make([]triage.Message, 10000)
	for i := range msgs {
		body := fmt.Sprintf(`{"message_id":"m-%d","event_type":"order.created","schema_version":%d,"customer":{"tenant_id":"t-%d","email":"user%d@example.com"},"items":[{"sku":"SKU-%d","qty":2}],"failure":{"reason_code":"code_%d","consumer_version":"1.%d.0"}}`,
			i, i%4, i%50, i, i, i%7, i%3)
		msgs[i] = triage.Message{Queue: "nghia-dia", Exchange: "dlx", Body: []byte(body),
			Properties: triage.Properties{ContentType: "application/json"},
			Headers:    triage.Headers{"x-death": []any{xdeath("viec", "rejected", 1, t0.Add(time.Duration(i)*time.Second), "", "viec")}, "x-trace": "abc"}}
	}
	ts := triage.Analyze(triage.Batch{Queue: "nghia-dia", Messages: msgs}, parkingTopology(), redact.New())
	red := redact.New()
	for _, exprs := range [][]string{
		{"reason_code=code_3", "schema_version>=2"},
		{"died<2026-11-30T11:00:00Z"},
		{"text~sku-42"},
		{"tenant=t-7"},
	} {
		for _, cache := range []*SearchCache{nil, NewSearchCache(0)} {
			f, err := ParseWhere(exprs, Options{TenantPath: "customer.tenant_id", Redactor: red, Cache: cache})
			if err != nil {
				b.Fatal(err)
			}
			name := fmt.Sprint(exprs)
			if cache != nil {
				name += "/cached"
				f.Apply(ts) // the first key press fills it
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					if len(f.Apply(ts)) == 0 {
						b.Fatal("nothing matched")
					}
				}
			})
		}
	}
}

// BenchmarkNarrowResolved100k is what a key press costs in Update once a
// text~ filter over 100,000 index entries is resolved: a lookup a message,
// then the regroup of what matched.
func BenchmarkNarrowResolved100k(b *testing.B) {
	ts := indexed(100_000)
	f, err := ParseLine("text~needle-3", Options{})
	if err != nil {
		b.Fatal(err)
	}
	r, err := f.Resolve(context.Background(), triage.Slice(ts))
	if err != nil {
		b.Fatal(err)
	}
	in := triage.Inspection{Messages: ts, Groups: triage.GroupMessages(ts)}
	for b.Loop() {
		if n := len(r.Narrow(in).Messages); n != 10_000 {
			b.Fatalf("%d matched", n)
		}
	}
}
