package triage

import (
	"strings"
	"testing"
)

func TestClassifyReason(t *testing.T) {
	t1 := mustTime("2026-11-30T10:00:00Z")
	s1, s2 := seed001Topology(), seed002Topology()

	// A topic DLX shared by two work queues, each with its own routing key,
	// and a headers DLX; both reach their parking queues through e2e bindings.
	shared := Topology{
		Exchanges: []Exchange{{Name: "dead.topic", Type: "topic"}, {Name: "dead.fan", Type: "fanout"}, {Name: "dead.hdr", Type: "headers"}},
		Queues: []Queue{
			{Name: "billing", DeadLetterExchange: "dead.topic", HasDeadLetterExchange: true},
			{Name: "shipping", DeadLetterExchange: "dead.topic", HasDeadLetterExchange: true, DeadLetterRoutingKey: "shipping.dead", HasDeadLetterRoutingKey: true},
			{Name: "audit", DeadLetterExchange: "dead.hdr", HasDeadLetterExchange: true},
			{Name: "by-rk", DeadLetterExchange: "", HasDeadLetterExchange: true, DeadLetterRoutingKey: "parked", HasDeadLetterRoutingKey: true},
			{Name: "billing.parking"}, {Name: "shipping.parking"}, {Name: "audit.parking"}, {Name: "parked"},
		},
		Bindings: []Binding{
			{Source: "dead.topic", Destination: "dead.fan", DestinationType: "exchange", RoutingKey: "billing.#"},
			{Source: "dead.fan", Destination: "billing.parking", DestinationType: "queue"},
			{Source: "dead.topic", Destination: "shipping.parking", DestinationType: "queue", RoutingKey: "*.dead"},
			{Source: "dead.hdr", Destination: "audit.parking", DestinationType: "queue", Arguments: Headers{"x-match": "all", "team": "audit"}},
		},
	}

	tests := []struct {
		name   string
		top    Topology
		m      Message
		deaths []Death
		want   Reason
	}{
		{"no x-death: published", s1, Message{Queue: "nghia-dia"}, nil, ReasonPublished},
		{"seed 001 rejected", s1, Message{Queue: "nghia-dia", Exchange: "dlx", RoutingKey: "viec"},
			[]Death{{Queue: "viec", Reason: ReasonRejected, Count: 1, Time: t1, RoutingKeys: []string{"viec"}}}, ReasonRejected},
		{"seed 001 expired", s1, Message{Queue: "nghia-dia", Exchange: "dlx", RoutingKey: "viec2"},
			[]Death{{Queue: "viec2", Reason: ReasonExpired, Count: 1, RoutingKeys: []string{"viec2"}}}, ReasonExpired},
		{"seed 001 maxlen", s1, Message{Queue: "nghia-dia", Exchange: "dlx", RoutingKey: "viec3"},
			[]Death{{Queue: "viec3", Reason: ReasonMaxlen, Count: 1, RoutingKeys: []string{"viec3"}}}, ReasonMaxlen},
		{"quorum delivery_limit", s1, Message{Queue: "nghia-dia", Exchange: "dlx", RoutingKey: "viec-qq"},
			[]Death{{Queue: "viec-qq", Reason: ReasonDeliveryLimit, Count: 1, RoutingKeys: []string{"viec-qq"}}}, ReasonDeliveryLimit},
		{"unknown reason kept", s1, Message{Queue: "nghia-dia", Exchange: "dlx"},
			[]Death{{Queue: "viec", Reason: "x-future"}}, "x-future"},
		{"death in a queue without DLX: published", s1, Message{Queue: "nghia-dia"},
			[]Death{{Queue: "nghia-dia", Reason: ReasonRejected}}, ReasonPublished},
		{"seed 002: expired in a bucket, then the app published", s2,
			Message{Queue: "orders.dlq.q", Exchange: "orders.dlx.exchange", RoutingKey: "orders.dlq"},
			[]Death{
				{Queue: "orders.retry.16s.q", Reason: ReasonExpired, Count: 1, RoutingKeys: []string{"orders.retry.16s.q"}},
				{Queue: "orders.retry.2s.q", Reason: ReasonExpired, Count: 1, RoutingKeys: []string{"orders.retry.2s.q"}},
			}, ReasonPublished},
		{"seed 002: older entries do not matter, only [0]", s2,
			Message{Queue: "orders.dlq.q", Exchange: "orders.dlx.exchange", RoutingKey: "orders.dlq"},
			[]Death{
				{Queue: "orders.retry.2s.q", Reason: ReasonExpired, Count: 1},
				{Queue: "orders.main.q", Reason: ReasonRejected, Count: 1, RoutingKeys: []string{"orders.dlq"}},
			}, ReasonPublished},
		{"seed 002: main queue reject whose key the DLX routes to the DLQ", s2,
			Message{Queue: "orders.dlq.q", Exchange: "orders.dlx.exchange", RoutingKey: "orders.dlq"},
			[]Death{{Queue: "orders.main.q", Reason: ReasonRejected, Count: 1, RoutingKeys: []string{"orders.dlq"}}}, ReasonRejected},
		{"seed 002: main queue reject with key orders goes nowhere near the DLQ", s2,
			Message{Queue: "orders.dlq.q"},
			[]Death{{Queue: "orders.main.q", Reason: ReasonRejected, Count: 1, RoutingKeys: []string{"orders"}}}, ReasonPublished},
		{"topic DLX via e2e fanout", shared, Message{Queue: "billing.parking"},
			[]Death{{Queue: "billing", Reason: ReasonRejected, RoutingKeys: []string{"billing.invoice.created"}}}, ReasonRejected},
		{"topic DLX with a narrow binding that does not match", shared, Message{Queue: "billing.parking"},
			[]Death{{Queue: "billing", Reason: ReasonRejected, RoutingKeys: []string{"invoice.created"}}}, ReasonPublished},
		{"dead-letter routing key wins over the death's keys", shared, Message{Queue: "shipping.parking"},
			[]Death{{Queue: "shipping", Reason: ReasonExpired, RoutingKeys: []string{"nothing.matches.this"}}}, ReasonExpired},
		{"headers DLX matching the message headers", shared, Message{Queue: "audit.parking", Headers: Headers{"team": "audit"}},
			[]Death{{Queue: "audit", Reason: ReasonMaxlen}}, ReasonMaxlen},
		{"headers DLX not matching", shared, Message{Queue: "audit.parking", Headers: Headers{"team": "ops"}},
			[]Death{{Queue: "audit", Reason: ReasonMaxlen}}, ReasonPublished},
		{"DLX is the default exchange with a routing key", shared, Message{Queue: "parked"},
			[]Death{{Queue: "by-rk", Reason: ReasonRejected}}, ReasonRejected},

		// x-death[0].queue is gone from the topology: decide from the delivery.
		{"deleted queue: delivered via a DLX with the death's key", s1,
			Message{Queue: "nghia-dia", Exchange: "dlx", RoutingKey: "gone"},
			[]Death{{Queue: "gone", Reason: ReasonRejected, RoutingKeys: []string{"gone"}}}, ReasonRejected},
		{"deleted queue: delivered via a DLX with some queue's dead-letter key", s2,
			Message{Queue: "orders.main.q", Exchange: "orders.exchange", RoutingKey: "orders"},
			[]Death{{Queue: "orders.retry.32s.q", Reason: ReasonExpired, RoutingKeys: []string{"orders.retry.32s.q"}}}, ReasonExpired},
		{"deleted bucket, app published to the DLX with its own key (seed 002)", s2,
			Message{Queue: "orders.dlq.q", Exchange: "orders.dlx.exchange", RoutingKey: "orders.dlq"},
			[]Death{{Queue: "orders.retry.32s.q", Reason: ReasonExpired, RoutingKeys: []string{"orders.retry.32s.q"}}}, ReasonPublished},
		{"deleted queue: delivered through an exchange that is nobody's DLX", s1,
			Message{Queue: "nghia-dia", Exchange: "amq.direct", RoutingKey: "gone"},
			[]Death{{Queue: "gone", Reason: ReasonRejected, RoutingKeys: []string{"gone"}}}, ReasonPublished},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClassifyReason(tc.m, tc.deaths, tc.top); got != tc.want {
				t.Fatalf("ClassifyReason = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReasonCodeOf(t *testing.T) {
	const springTrace = "java.lang.IllegalStateException: order 42 has no customer\n\tat com.acme.Orders.handle(Orders.java:10)\n"
	const springWrapped = "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener method 'handle' threw exception\n" +
		"\tat org.springframework...(AbstractMessageListenerContainer.java:1)\n" +
		"Caused by: com.acme.TaxProfileMissingException: customer 7 has no tax profile\n\tat com.acme...\n" +
		"Caused by: java.sql.SQLException: deeper\n"
	withFailure := Envelope{IsJSON: true, Failure: &Failure{ReasonCode: "customer_tax_profile_missing"}}
	tests := []struct {
		name string
		h    Headers
		env  Envelope
		want string
	}{
		{"envelope wins", Headers{"x-reason-code": "header_code"}, withFailure, "customer_tax_profile_missing"},
		{"empty envelope code falls through", Headers{"x-reason-code": "header_code"}, Envelope{IsJSON: true, Failure: &Failure{ReasonCode: "  "}}, "header_code"},
		{"x-reason-code", Headers{"x-reason-code": "payment_declined"}, Envelope{}, "payment_declined"},
		{"reason_code", Headers{"reason_code": []byte("schema_invalid")}, Envelope{}, "schema_invalid"},
		{"x-reason-code before reason_code", Headers{"reason_code": "b", "x-reason-code": "a"}, Envelope{}, "a"},
		{"header name case", Headers{"X-Reason-Code": "upper"}, Envelope{}, "upper"},
		{"numeric code", Headers{"x-reason-code": int64(4042)}, Envelope{}, "4042"},
		{"spring: root cause @ first app frame", Headers{"x-exception-stacktrace": springTrace, "x-exception-message": "order 42 has no customer"}, Envelope{}, "IllegalStateException @ Orders.handle"},
		{"spring wrapper: the innermost cause", Headers{"x-exception-stacktrace": springWrapped}, Envelope{}, "SQLException"},
		{"spring exception without message", Headers{"x-exception-stacktrace": "com.acme.Boom\n\tat x"}, Envelope{}, "Boom"},
		{"spring trace that is not a trace: its text", Headers{"x-exception-stacktrace": "something went wrong: badly"}, Envelope{}, "something went wrong: badly"},
		{"exception message alone: normalised", Headers{"x-exception-message": "order 42 has no customer", "x-original-exchange": "orders"}, Envelope{}, "order <n> has no customer"},
		{"masstransit", Headers{"MT-Fault-ExceptionType": "System.TimeoutException", "MT-Fault-Message": "timed out after 30s"}, Envelope{}, "TimeoutException"},
		{"nservicebus", Headers{"NServiceBus.ExceptionInfo.ExceptionType": "Acme.ValidationException", "NServiceBus.ExceptionInfo.Message": "bad"}, Envelope{}, "ValidationException"},
		{"app code beats framework type", Headers{"reason_code": "app", "MT-Fault-ExceptionType": "System.Exception"}, Envelope{}, "app"},
		{"nothing", Headers{"x-death": []any{}}, Envelope{}, ""},
		{"sanitised and trimmed", Headers{"x-reason-code": "  bad\x1b[31mcode\n "}, Envelope{}, `bad\x1b[31mcode`},
		{"not text", Headers{"x-reason-code": Headers{"a": "b"}, "reason_code": true}, Envelope{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReasonCodeOf(Message{Headers: tc.h}, tc.env); got != tc.want {
				t.Fatalf("ReasonCodeOf = %q, want %q", got, tc.want)
			}
		})
	}

	long := ReasonCodeOf(Message{Headers: Headers{"x-reason-code": strings.Repeat("é", 200)}}, Envelope{})
	if len(long) > maxReasonCode+len("…") || !strings.HasSuffix(long, "…") {
		t.Fatalf("long code not bounded: %d bytes %q", len(long), long)
	}
}
