package replay

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

func TestAggregatesKeepTheOriginalOrder(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	msg := func(id string, body string, died time.Duration, pos int) triage.Triaged {
		return triage.Triaged{ID: id, DiedAt: t0.Add(died), Message: triage.Message{Body: []byte(body), Position: pos,
			Headers: triage.Headers{"aggregate": "h-" + id[:1]}}}
	}
	ms := []triage.Triaged{
		msg("b2", `{"order":{"id":"B"}}`, time.Second, 0), // died later, first in the queue
		msg("a1", `{"order":{"id":"A"}}`, 0, 3),
		msg("b1", `{"order":{"id":"B"}}`, 0, 1),
		msg("a2", `{"order":{"id":"A"}}`, 0, 4), // same second as a1: position decides
		msg("x1", `not json`, 0, 2),
	}
	aggs, keyless := Aggregates(ms, "order.id")
	want := []Aggregate{{"B", []string{"b1", "b2"}}, {"A", []string{"a1", "a2"}}}
	if fmt.Sprint(aggs) != fmt.Sprint(want) || !slices.Equal(keyless, []string{"x1"}) {
		t.Errorf("aggregates %v keyless %v, want %v [x1]", aggs, keyless, want)
	}
	if aggs, keyless := Aggregates(ms, "headers.aggregate"); len(aggs) != 3 || len(keyless) != 0 {
		t.Errorf("by header: %v %v", aggs, keyless)
	}
}

func TestRunInOrderStopsOnlyTheAggregateThatFails(t *testing.T) {
	aggs := []Aggregate{{"A", []string{"a1", "a2", "a3"}}, {"B", []string{"b1", "b2", "b3"}}, {"C", []string{"c1"}}}
	var waves [][]string
	wave := func(_ context.Context, ids []string) (map[string]Outcome, error) {
		waves = append(waves, ids)
		out := map[string]Outcome{}
		for _, id := range ids {
			out[id] = OutcomeResolved
			if id == "b2" {
				out[id] = OutcomeFailedAgain
			}
		}
		return out, nil
	}
	res, err := RunInOrder(context.Background(), aggs, wave)
	if err != nil {
		t.Fatal(err)
	}
	wantWaves := [][]string{{"a1", "b1", "c1"}, {"a2", "b2"}, {"a3"}}
	if fmt.Sprint(waves) != fmt.Sprint(wantWaves) {
		t.Errorf("waves %v, want %v: one message per aggregate, the next after the previous resolved", waves, wantWaves)
	}
	want := []AggregateResult{
		{Key: "A", Replayed: []string{"a1", "a2", "a3"}},
		{Key: "B", Replayed: []string{"b1"}, StoppedAt: "b2", Why: "failed-again", Left: []string{"b3"}},
		{Key: "C", Replayed: []string{"c1"}},
	}
	if fmt.Sprint(res) != fmt.Sprint(want) {
		t.Errorf("results %+v, want %+v", res, want)
	}
}

func TestSubsetIsOneObservedWave(t *testing.T) {
	p := Plan{ID: "rp-1", Items: ItemsOf(Item{ID: "a"}, Item{ID: "b"}, Item{ID: "c"}), Options: Options{Rate: 20, Canary: 5, CanaryRate: 1, Observe: time.Second}}
	q := p.Subset([]string{"c", "a"}, time.Now())
	if q.ID == p.ID || q.Items.Len() != 2 || q.Items.At(0).ID != "a" || q.Options.Canary != 2 || q.Options.CanaryRate != 20 || q.Options.Observe != time.Second || !q.Options.AutoRamp {
		t.Errorf("subset %+v", q)
	}
}
