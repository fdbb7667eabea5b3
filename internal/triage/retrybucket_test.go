package triage

import (
	"slices"
	"testing"
)

func TestRetryBucketOf(t *testing.T) {
	top := Topology{
		Exchanges: []Exchange{{Name: "retry", Type: "direct"}},
		Queues: []Queue{
			{Name: "orders.q", HasDeadLetterExchange: true, DeadLetterExchange: "", HasDeadLetterRoutingKey: true, DeadLetterRoutingKey: "orders.dlq"},
			{Name: "orders.dlq"},
			// a bucket by queue TTL, through the default exchange
			{Name: "orders.retry.1", MessageTTL: 5000, HasDeadLetterExchange: true, DeadLetterExchange: "", HasDeadLetterRoutingKey: true, DeadLetterRoutingKey: "orders.q"},
			// a bucket by per-message TTL (no queue TTL), keeping the message's key, through an exchange
			{Name: "billing.wait", HasDeadLetterExchange: true, DeadLetterExchange: "retry"},
			{Name: "billing.q", Consumers: 2},
			// a consumed queue with a DLX is a work queue, not a bucket
			{Name: "shipping.q", Consumers: 1, MessageTTL: 5000, HasDeadLetterExchange: true, DeadLetterExchange: "", HasDeadLetterRoutingKey: true, DeadLetterRoutingKey: "orders.q"},
			// a TTL queue that dead-letters straight into the parking queue is no bucket for it
			{Name: "late", MessageTTL: 1000, HasDeadLetterExchange: true, DeadLetterExchange: "", HasDeadLetterRoutingKey: true, DeadLetterRoutingKey: "orders.dlq"},
		},
		Bindings: []Binding{{Source: "retry", Destination: "billing.q", DestinationType: "queue", RoutingKey: "billing.charge"}},
	}
	tests := []struct {
		name   string
		route  Route
		deaths []Death
		want   RetryHop
		ok     bool
	}{
		{"queue TTL bucket", Route{RoutingKey: "orders.retry.1"}, nil,
			RetryHop{Bucket: "orders.retry.1", Next: Route{RoutingKey: "orders.q"}, Feeds: []string{"orders.q"}}, true},
		{"per-message TTL bucket, seen expiring there", Route{RoutingKey: "billing.wait"}, []Death{{Queue: "billing.wait", Reason: ReasonExpired, RoutingKeys: []string{"billing.charge"}}},
			RetryHop{Bucket: "billing.wait", Next: Route{Exchange: "retry", RoutingKey: "billing.charge"}, Feeds: []string{"billing.q"}}, true},
		{"no TTL and no expiry seen: not a bucket", Route{RoutingKey: "billing.wait"}, nil, RetryHop{}, false},
		{"the work queue itself", Route{RoutingKey: "orders.q"}, nil, RetryHop{}, false},
		{"a consumed queue", Route{RoutingKey: "shipping.q"}, nil, RetryHop{}, false},
		{"into the parking queue", Route{RoutingKey: "late"}, nil, RetryHop{}, false},
		{"nowhere", Route{Exchange: "retry", RoutingKey: "nope"}, nil, RetryHop{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := top.RetryBucketOf(tt.route, nil, tt.deaths, "orders.dlq")
			if ok != tt.ok || got.Bucket != tt.want.Bucket || got.Next != tt.want.Next || !slices.Equal(got.Feeds, tt.want.Feeds) {
				t.Errorf("RetryBucketOf = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
	if s := (RetryHop{Bucket: "orders.retry.1", Feeds: []string{"orders.q"}}).String(); s != "retry bucket orders.retry.1 → orders.q" {
		t.Errorf("String() = %q", s)
	}
}
