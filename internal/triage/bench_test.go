package triage

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

// indexedMessages is n messages as the read leaves them once each is
// analysed: identity, reason and code, death time and event type, with the
// spread of a real incident (a few large groups, a long tail of codes).
func indexedMessages(n int) []Triaged {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	reasons := []Reason{ReasonRejected, ReasonExpired, ReasonMaxlen, ReasonPublished, ReasonDeliveryLimit}
	events := []string{"order.created", "order.paid", "customer.updated", "", "invoice.issued"}
	codes := make([]string, 200)
	for i := range codes {
		codes[i] = fmt.Sprintf("code_%03d", i)
	}
	ts := make([]Triaged, n)
	for i := range ts {
		code := codes[(i*i)%7] // most messages share a few codes
		if i%10 == 0 {
			code = codes[i%len(codes)]
		}
		ts[i] = Triaged{ID: fmt.Sprintf("msg_%07d", i), Reason: reasons[i%len(reasons)], ReasonCode: code,
			DiedAt: t0.Add(time.Duration(i) * time.Millisecond), Envelope: Envelope{EventType: events[i%len(events)]}}
		if i%97 == 0 {
			ts[i].DiedAt = time.Time{}
		}
	}
	return ts
}

// TestGroupsOfAMillionAddUp: every message is in exactly one group, and
// the counts are the members.
func TestGroupsOfAMillionAddUp(t *testing.T) {
	ts := indexedMessages(1_000_000)
	groups := GroupMessages(ts)
	seen := make([]bool, len(ts))
	total := 0
	for _, g := range groups {
		if g.Count != len(g.Members) {
			t.Fatalf("%s/%s: count %d, %d members", g.Reason, g.ReasonCode, g.Count, len(g.Members))
		}
		for _, m := range g.Members {
			if seen[m] || ts[m].Reason != g.Reason || ts[m].ReasonCode != g.ReasonCode {
				t.Fatalf("message %d misplaced in %s/%s", m, g.Reason, g.ReasonCode)
			}
			seen[m] = true
		}
		total += g.Count
	}
	if total != len(ts) {
		t.Fatalf("groups hold %d of %d", total, len(ts))
	}
	for i := 1; i < len(groups); i++ {
		if groups[i].Count > groups[i-1].Count {
			t.Fatalf("group %d larger than the one before", i)
		}
	}
}

// BenchmarkGroup1M groups 1,000,000 indexed messages (target < 1 s): what
// a refresh, or a filter that regroups, costs at that size.
func BenchmarkGroup1M(b *testing.B) {
	ts := indexedMessages(1_000_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if len(GroupMessages(ts)) == 0 {
			b.Fatal("no groups")
		}
	}
}

// TestAnalyzeOnEveryCoreMatchesOneCore: splitting the batch across cores
// changes nothing of what comes out, identities (numbered over the whole
// batch) included.
func TestAnalyzeOnEveryCoreMatchesOneCore(t *testing.T) {
	batch := syntheticBatch(5000)
	top := seed002Topology()
	prev := runtime.GOMAXPROCS(1)
	one := Analyze(batch, top, redact.New())
	runtime.GOMAXPROCS(max(prev, 4))
	many := Analyze(batch, top, redact.New())
	runtime.GOMAXPROCS(prev)
	if !reflect.DeepEqual(one, many) {
		for i := range one {
			if !reflect.DeepEqual(one[i], many[i]) {
				t.Fatalf("message %d differs: %s vs %s", i, one[i].ID, many[i].ID)
			}
		}
	}
}
