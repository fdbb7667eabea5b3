package triage

import (
	"testing"
	"time"
)

// TestAttemptsCountEveryDeath: a message that died three times (three
// x-death entries, two of them waits in retry buckets) with
// x-retry-attempt: 2 was shown as "attempts 1". Every death counts, and
// the largest of every counter a broker, an application or a framework
// keeps wins.
func TestAttemptsCountEveryDeath(t *testing.T) {
	t0 := mustTime("2026-11-30T10:00:00Z")
	deaths := []any{
		xdeath("orders.q", "rejected", 1, t0.Add(30*time.Second), "orders", "orders.created"),
		xdeath("orders.retry.1", "expired", 1, t0.Add(5*time.Second), "", "orders.retry.1"),
		xdeath("orders.retry.2", "expired", 1, t0.Add(15*time.Second), "", "orders.retry.2"),
	}
	tests := []struct {
		name string
		h    Headers
		want int
	}{
		{"three x-death entries and x-retry-attempt 2", Headers{"x-death": deaths, "x-retry-attempt": int64(2)}, 3},
		{"x-death counts summed over entries", Headers{"x-death": []any{
			xdeath("orders.q", "rejected", 4, t0, "", "k"), xdeath("orders.retry.1", "expired", 4, t0, "", "k")}}, 8},
		{"x-retry-attempt above the deaths", Headers{"x-death": deaths, "x-retry-attempt": int64(6)}, 6},
		{"x-retries", Headers{"x-retries": "4"}, 4},
		{"first and last death headers only (a broker that dropped x-death)", Headers{
			"x-first-death-queue": "orders.q", "x-first-death-reason": "rejected",
			"x-last-death-queue": "orders.retry.2", "x-last-death-reason": "expired"}, 2},
		{"first death header only", Headers{"x-first-death-queue": "orders.q", "x-first-death-reason": "rejected"}, 1},
		{"NServiceBus delayed retries", Headers{"NServiceBus.Retries": int64(3), "NServiceBus.ExceptionInfo.ExceptionType": "System.Exception"}, 3},
		{"NServiceBus.DelayedRetries", Headers{"NServiceBus.DelayedRetries": int64(2)}, 2},
		{"MassTransit redeliveries", Headers{"MT-Redelivery-Count": int64(5), "MT-Fault-ExceptionType": "System.Exception"}, 5},
		{"Spring retry count", Headers{"x-retry-count": int64(4), "x-exception-message": "boom"}, 4},
		{"Celery retries", Headers{"task": "shipping.tasks.book_label", "retries": int64(3)}, 3},
		{"a maxlen overflow is no try", Headers{"x-death": []any{xdeath("orders.q", "maxlen", 2, t0, "", "k")},
			"x-first-death-queue": "orders.q", "x-first-death-reason": "maxlen"}, 0},
		{"nor without x-death", Headers{"x-first-death-queue": "orders.q", "x-first-death-reason": "maxlen"}, 0},
		{"garbage counters are no attempts", Headers{"x-retry-attempt": "many", "x-retries": int64(-4)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Analyze(Batch{Messages: []Message{{Queue: "orders.dlq", Headers: tt.h}}}, Topology{}, nil)[0]
			if got.Attempts != tt.want {
				t.Fatalf("attempts %d, want %d", got.Attempts, tt.want)
			}
		})
	}
	// The frameworks' own counters, in their real header sets.
	want := map[string]int{"MassTransit _error queue": 2, "NServiceBus error queue": 3, "Celery task (Kombu message protocol 2) with its traceback": 3}
	for _, s := range faultSamples(t) {
		if n, ok := want[s.Name]; ok {
			if got := Analyze(Batch{Messages: []Message{{Queue: "q", Headers: s.Headers}}}, Topology{}, nil)[0].Attempts; got != n {
				t.Errorf("%s: attempts %d, want %d", s.Name, got, n)
			}
			delete(want, s.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("samples missing: %v", want)
	}
}
