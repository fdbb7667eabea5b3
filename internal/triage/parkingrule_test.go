package triage

import "testing"

// TestFrameworkParkingQueuesFoundByDefault: the default names the frameworks
// dlqt decodes park their failures in are parking queues, and each says
// which rule found it; a work queue whose name merely contains "error" is
// not one.
func TestFrameworkParkingQueuesFoundByDefault(t *testing.T) {
	cases := []struct {
		queue string
		rule  string // "" : not a parking queue
	}{
		{"error", "name =error (NServiceBus)"},
		{"ERROR", "name =error (NServiceBus)"},
		{"Sales.error", "name *.error (NServiceBus)"},
		{"billing_error", "name *_error (MassTransit)"},
		{"billing_skipped", "name *_skipped (MassTransit)"},
		{"inventory.dlq", "name *.dlq (Spring AMQP)"},
		{"inventory.DLQ", "name *.dlq (Spring AMQP)"},
		{"DLQ.orders", "name DLQ.* (ActiveMQ)"},
		{"orders-dlq-2", "name dlq"},
		{"audit.failed", "name failed"},
		{"errors_total", ""},
		{"error-reporter", ""},
		{"orders", ""},
	}
	for _, c := range cases {
		top := Topology{Vhost: "v", Queues: []Queue{{Name: c.queue}}}
		got := FindParkingQueues(top, nil)
		switch {
		case c.rule == "" && len(got) != 0:
			t.Errorf("%s: taken for a parking queue by %q", c.queue, got[0].Rule)
		case c.rule != "" && len(got) != 1:
			t.Errorf("%s: not found", c.queue)
		case c.rule != "" && got[0].Rule != c.rule:
			t.Errorf("%s: rule %q, want %q", c.queue, got[0].Rule, c.rule)
		}
	}
}

// TestParkingRuleOfADeadLetterTarget: a queue a dead-letter exchange feeds
// is parking by that route, whatever its name.
func TestParkingRuleOfADeadLetterTarget(t *testing.T) {
	top := Topology{
		Exchanges: []Exchange{{Name: "dlx", Type: "fanout"}},
		Queues: []Queue{
			{Name: "work", DeadLetterExchange: "dlx", HasDeadLetterExchange: true},
			{Name: "work_error"},
		},
		Bindings: []Binding{{Source: "dlx", Destination: "work_error", DestinationType: "queue"}},
	}
	got := FindParkingQueues(top, nil)
	if len(got) != 1 || got[0].Rule != "dead-lettered from work" {
		t.Fatalf("got %+v", got)
	}
}

func TestParkingPatternSyntax(t *testing.T) {
	cases := []struct {
		pattern, name string
		match         bool
	}{
		{"dlq", "orders.DLQ.v2", true}, // a plain word is a substring, as before
		{"=error", "error", true},
		{"=error", "error.q", false},
		{"*_error", "a_error", true},
		{"*_error", "a_error_b", false},
		{"DLQ.*", "dlq.x", true},
		{"orders.?", "orders.1", true},
		{"[", "[", true}, // a malformed glob is no error: it never matches as a glob, and a plain "[" is a substring
	}
	for _, c := range cases {
		if got := parkingPatternMatches(c.pattern, c.name); got != c.match {
			t.Errorf("%q on %q: %v, want %v", c.pattern, c.name, got, c.match)
		}
	}
}
