package triage

// Topologies of the seed articles, as the broker package reports them.

// seed001Topology: three work queues dead-letter (reject, TTL, max-length)
// through a fanout DLX into one parking queue; plus a quorum queue with a
// delivery limit into the same DLX.
func seed001Topology() Topology {
	return Topology{
		Vhost: "seed1",
		Exchanges: []Exchange{
			{Name: "dlx", Type: "fanout"},
			{Name: "amq.direct", Type: "direct"},
		},
		Queues: []Queue{
			{Name: "viec", Type: QueueClassic, DeadLetterExchange: "dlx", HasDeadLetterExchange: true},
			{Name: "viec2", Type: QueueClassic, DeadLetterExchange: "dlx", HasDeadLetterExchange: true, MessageTTL: 1000},
			{Name: "viec3", Type: QueueClassic, DeadLetterExchange: "dlx", HasDeadLetterExchange: true, MaxLength: 2},
			{Name: "viec-qq", Type: QueueQuorum, DeadLetterExchange: "dlx", HasDeadLetterExchange: true, DeliveryLimit: 3},
			{Name: "nghia-dia", Type: QueueClassic, Messages: 6},
		},
		Bindings: []Binding{
			{Source: "dlx", Destination: "nghia-dia", DestinationType: "queue"},
		},
	}
}

// seed002Topology: application-managed retries. The consumer republishes a
// failed message into a TTL bucket via the default exchange; the bucket's
// DLX sends it back to orders.exchange/orders -> orders.main.q; past the
// threshold the app publishes to orders.dlx.exchange/orders.dlq.
func seed002Topology() Topology {
	bucket := func(name string, ttl int64) Queue {
		return Queue{Name: name, Type: QueueClassic, MessageTTL: ttl,
			DeadLetterExchange: "orders.exchange", HasDeadLetterExchange: true,
			DeadLetterRoutingKey: "orders", HasDeadLetterRoutingKey: true}
	}
	return Topology{
		Vhost: "seed2",
		Exchanges: []Exchange{
			{Name: "orders.exchange", Type: "direct"},
			{Name: "orders.dlx.exchange", Type: "direct"},
		},
		Queues: []Queue{
			{Name: "orders.main.q", Type: QueueClassic, Consumers: 1, DeadLetterExchange: "orders.dlx.exchange", HasDeadLetterExchange: true},
			bucket("orders.retry.2s.q", 2000),
			bucket("orders.retry.4s.q", 4000),
			bucket("orders.retry.8s.q", 8000),
			bucket("orders.retry.16s.q", 16000),
			{Name: "orders.dlq.q", Type: QueueClassic, Messages: 3},
		},
		Bindings: []Binding{
			{Source: "orders.exchange", Destination: "orders.main.q", DestinationType: "queue", RoutingKey: "orders"},
			{Source: "orders.dlx.exchange", Destination: "orders.dlq.q", DestinationType: "queue", RoutingKey: "orders.dlq"},
		},
	}
}
