package filter

import (
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// The fixtures below are the core triage tests' own (their helpers are in
// package triage's test files, out of reach from here).

// parkingTopology: three work queues dead-letter (reject, TTL, max-length)
// through a fanout DLX into one parking queue, nghia-dia; plus a quorum
// queue with a delivery limit into the same DLX.
func parkingTopology() triage.Topology {
	return triage.Topology{
		Vhost: "seed1",
		Exchanges: []triage.Exchange{
			{Name: "dlx", Type: "fanout"},
			{Name: "amq.direct", Type: "direct"},
		},
		Queues: []triage.Queue{
			{Name: "viec", Type: triage.QueueClassic, DeadLetterExchange: "dlx", HasDeadLetterExchange: true},
			{Name: "viec2", Type: triage.QueueClassic, DeadLetterExchange: "dlx", HasDeadLetterExchange: true, MessageTTL: 1000},
			{Name: "viec3", Type: triage.QueueClassic, DeadLetterExchange: "dlx", HasDeadLetterExchange: true, MaxLength: 2},
			{Name: "viec-qq", Type: triage.QueueQuorum, DeadLetterExchange: "dlx", HasDeadLetterExchange: true, DeliveryLimit: 3},
			{Name: "nghia-dia", Type: triage.QueueClassic, Messages: 6},
		},
		Bindings: []triage.Binding{
			{Source: "dlx", Destination: "nghia-dia", DestinationType: "queue"},
		},
	}
}

// xdeath builds one x-death entry the way the broker package hands it over.
func xdeath(queue, reason string, count int64, when time.Time, exchange string, keys ...string) triage.Headers {
	rk := make([]any, len(keys))
	for i, k := range keys {
		rk[i] = k
	}
	return triage.Headers{"queue": queue, "reason": reason, "count": count, "time": when, "exchange": exchange, "routing-keys": rk}
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func mustPath(t *testing.T, s string) redact.JSONPath {
	t.Helper()
	p, err := redact.ParseJSONPath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
