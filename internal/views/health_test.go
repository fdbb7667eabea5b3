package views

import (
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// TestHealthRowsSortByAttentionAndCarryAWord: fastest-growing first, then
// the oldest message, then the deepest; each row's state is a word from
// the thresholds, so it reads without colour.
func TestHealthRowsSortByAttentionAndCarryAWord(t *testing.T) {
	ctx := testContext()
	now := ctx.now()
	pq := func(name string, depth int, age time.Duration) triage.ParkingQueue {
		p := triage.ParkingQueue{Queue: triage.Queue{Name: name, Messages: depth}}
		if age > 0 {
			p.HeadPublished = now.Add(-age)
		}
		return p
	}
	in := []triage.ParkingQueue{
		pq("deep.dlq", 5000, 0),             // deepest, nothing arriving
		pq("old.dlq", 3, 2*time.Hour),       // oldest
		pq("slow.dlq", 40, 5*time.Minute),   // trickling in
		pq("flood.dlq", 200, 1*time.Minute), // growing fastest
		pq("quiet.dlq", 1, time.Minute),
	}
	trends := map[string]Trend{
		"flood.dlq": {Ingress: 25, History: []float64{5, 10, 25}},
		"slow.dlq":  {Ingress: 0.5, History: []float64{0.5}},
	}
	q := NewQueues(ctx)
	q.SetHealth(HealthThresholds{RateWarn: 0.2, AgeCrit: 90 * time.Minute}) // the rest from the defaults
	q.SetSize(120, 20)
	q.SetQueues(in, trends)
	want := []struct {
		name  string
		state Health
	}{
		{"flood.dlq", HealthCrit}, // 25/s over rate_crit 10
		{"slow.dlq", HealthWarn},  // 0.5/s over the configured rate_warn 0.2
		{"old.dlq", HealthCrit},   // 2h over the configured age_crit 90m
		{"quiet.dlq", HealthOK},   // 1m old, depth 1
		{"deep.dlq", HealthCrit},  // 5000 over depth_crit 1000, age unknown
	}
	for i, w := range want {
		q.table.Select(i)
		got, _ := q.Selected()
		if got.Name != w.name {
			t.Fatalf("row %d = %s, want %s", i, got.Name, w.name)
		}
		if s := q.Health(w.name); s != w.state {
			t.Errorf("%s state %q, want %q", w.name, s, w.state)
		}
		if row := q.table.row(i); row[0] != string(w.state) {
			t.Errorf("%s row starts %q, want the word %q", w.name, row[0], w.state)
		}
	}
	if v := q.View(); !contains(v, "fastest-growing, then oldest, then deepest first") {
		t.Errorf("header does not say the order:\n%s", v)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
