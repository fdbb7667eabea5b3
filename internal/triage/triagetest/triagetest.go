// Package triagetest holds the fixtures the tests of triage's subpackages
// share: the two demo topologies and x-death builders. (Core triage's own
// tests keep theirs: a package's tests cannot import a package that imports
// it.)
package triagetest

import (
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/redact/redacttest"
)

// MustTime parses an RFC 3339 time or panics.
func MustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// XDeath builds one x-death entry the way the broker package hands it over.
func XDeath(queue, reason string, count int64, when time.Time, exchange string, keys ...string) triage.Headers {
	rk := make([]any, len(keys))
	for i, k := range keys {
		rk[i] = k
	}
	return triage.Headers{"queue": queue, "reason": reason, "count": count, "time": when, "exchange": exchange, "routing-keys": rk}
}

// GraveyardTopology: three work queues dead-letter (reject, TTL, max-length)
// through a fanout DLX into one parking queue; plus a quorum queue with a
// delivery limit into the same DLX.
func GraveyardTopology() triage.Topology {
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

// AppRetryTopology: application-managed retries. The consumer republishes a
// failed message into a TTL bucket via the default exchange; the bucket's
// DLX sends it back to orders.exchange/orders -> orders.main.q; past the
// threshold the app publishes to orders.dlx.exchange/orders.dlq.
func AppRetryTopology() triage.Topology {
	bucket := func(name string, ttl int64) triage.Queue {
		return triage.Queue{Name: name, Type: triage.QueueClassic, MessageTTL: ttl,
			DeadLetterExchange: "orders.exchange", HasDeadLetterExchange: true,
			DeadLetterRoutingKey: "orders", HasDeadLetterRoutingKey: true}
	}
	return triage.Topology{
		Vhost: "seed2",
		Exchanges: []triage.Exchange{
			{Name: "orders.exchange", Type: "direct"},
			{Name: "orders.dlx.exchange", Type: "direct"},
		},
		Queues: []triage.Queue{
			{Name: "orders.main.q", Type: triage.QueueClassic, Consumers: 1, DeadLetterExchange: "orders.dlx.exchange", HasDeadLetterExchange: true},
			bucket("orders.retry.2s.q", 2000),
			bucket("orders.retry.4s.q", 4000),
			bucket("orders.retry.8s.q", 8000),
			bucket("orders.retry.16s.q", 16000),
			{Name: "orders.dlq.q", Type: triage.QueueClassic, Messages: 3},
		},
		Bindings: []triage.Binding{
			{Source: "orders.exchange", Destination: "orders.main.q", DestinationType: "queue", RoutingKey: "orders"},
			{Source: "orders.dlx.exchange", Destination: "orders.dlq.q", DestinationType: "queue", RoutingKey: "orders.dlq"},
		},
	}
}

// LeakyFailure is a parked message whose failure text carries secrets where
// applications put them: a password in x-last-error, a bearer token in
// x-error, a card in a MassTransit fault message, a card in the reason
// code, an API key in the consumer, a token in the event type and a
// password in the correlation id; it is returned analysed with red. None
// of secrets may be shown.
func LeakyFailure(red *redact.Redactor) (t triage.Triaged, secrets []string) {
	m := triage.Message{Queue: "orders.dlq.q",
		Properties: triage.Properties{CorrelationID: "corr password=Hunter2-corr"},
		Body: []byte(`{"event_type":"order.paid token=` + redacttest.Opaque + `","schema_version":"2",` +
			`"failure":{"reason_code":"DECLINED:` + redacttest.VisaRaw + `","consumer":"billing api_key=` + redacttest.Opaque + `","attempt":2}}`),
		Headers: triage.Headers{
			"x-last-error":     "db login failed password=Hunter2-db-pass",
			"x-error":          "Authorization: Bearer " + redacttest.Stripe,
			"MT-Fault-Message": "Card 5500 0000 0000 0004 declined",
		}}
	t = triage.Analyze(triage.Batch{Queue: m.Queue, Messages: []triage.Message{m}}, triage.Topology{}, red)[0]
	return t, []string{"Hunter2-corr", "Hunter2-db-pass", redacttest.Stripe, "5500 0000 0000", redacttest.VisaRaw, redacttest.Opaque}
}

// Messages is every message insp holds, wherever it holds them (a slice,
// a packed index, a filter's subset), in order; nil for none.
func Messages(insp *triage.Inspection) []triage.Triaged {
	var out []triage.Triaged
	for i := range insp.Len() {
		out = append(out, insp.At(i))
	}
	return out
}
