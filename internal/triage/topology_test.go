package triage

import (
	"reflect"
	"strings"
	"testing"
)

func TestRoutes(t *testing.T) {
	top := Topology{
		Exchanges: []Exchange{
			{Name: "d", Type: "direct"}, {Name: "f", Type: "fanout"}, {Name: "t", Type: "topic"},
			{Name: "h", Type: "headers"}, {Name: "plugin", Type: "x-consistent-hash"},
			{Name: "loop1", Type: "fanout"}, {Name: "loop2", Type: "fanout"}, {Name: "empty", Type: "direct"},
		},
		Queues: []Queue{{Name: "q1"}, {Name: "q2"}, {Name: "q3"}, {Name: "q4"}},
		Bindings: []Binding{
			{Source: "", Destination: "q1", DestinationType: "queue", RoutingKey: "q1"}, // listed by the API; implicit
			{Source: "d", Destination: "q1", DestinationType: "queue", RoutingKey: "k"},
			{Source: "d", Destination: "q2", DestinationType: "queue", RoutingKey: "k"},
			{Source: "d", Destination: "q3", DestinationType: "queue", RoutingKey: "other"},
			{Source: "d", Destination: "f", DestinationType: "exchange", RoutingKey: "k"},
			{Source: "f", Destination: "q2", DestinationType: "queue", RoutingKey: "ignored"},
			{Source: "f", Destination: "q4", DestinationType: "queue"},
			{Source: "t", Destination: "q1", DestinationType: "queue", RoutingKey: "orders.*.created"},
			{Source: "t", Destination: "q2", DestinationType: "queue", RoutingKey: "orders.#"},
			{Source: "t", Destination: "q3", DestinationType: "queue", RoutingKey: "#.failed"},
			{Source: "t", Destination: "q4", DestinationType: "queue", RoutingKey: "#"},
			{Source: "h", Destination: "q1", DestinationType: "queue", Arguments: Headers{"x-match": "all", "a": "1", "b": float64(2)}},
			{Source: "h", Destination: "q2", DestinationType: "queue", Arguments: Headers{"x-match": "any", "a": "1", "c": "3"}},
			{Source: "h", Destination: "q3", DestinationType: "queue", Arguments: Headers{"x-match": "all-with-x", "x-tenant": "acme"}},
			{Source: "h", Destination: "q4", DestinationType: "queue", Arguments: Headers{"present": nil}},
			{Source: "plugin", Destination: "q3", DestinationType: "queue", RoutingKey: "10"},
			{Source: "loop1", Destination: "loop2", DestinationType: "exchange"},
			{Source: "loop2", Destination: "loop1", DestinationType: "exchange"},
			{Source: "loop2", Destination: "q1", DestinationType: "queue"},
			{Source: "unlisted", Destination: "q2", DestinationType: "queue", RoutingKey: "zzz"},
		},
	}
	tests := []struct {
		name     string
		exchange string
		key      string
		headers  Headers
		want     []string
	}{
		{"default exchange by queue name", "", "q3", nil, []string{"q3"}},
		{"default exchange, no such queue", "", "nope", nil, []string{}},
		{"direct with e2e, deduplicated and sorted", "d", "k", nil, []string{"q1", "q2", "q4"}},
		{"direct other key", "d", "other", nil, []string{"q3"}},
		{"direct no match", "d", "none", nil, []string{}},
		{"fanout ignores keys", "f", "whatever", nil, []string{"q2", "q4"}},
		{"topic star and hash", "t", "orders.eu.created", nil, []string{"q1", "q2", "q4"}},
		{"topic star is exactly one word", "t", "orders.created", nil, []string{"q2", "q4"}},
		{"topic hash matches zero words", "t", "orders", nil, []string{"q2", "q4"}},
		{"topic leading hash", "t", "payments.card.failed", nil, []string{"q3", "q4"}},
		{"topic bare failed", "t", "failed", nil, []string{"q3", "q4"}},
		{"topic empty key", "t", "", nil, []string{"q4"}},
		{"headers all, numbers across shapes", "h", "", Headers{"a": "1", "b": int64(2)}, []string{"q1", "q2"}},
		{"headers all needs all", "h", "", Headers{"a": "1"}, []string{"q2"}},
		{"headers any", "h", "", Headers{"c": []byte("3")}, []string{"q2"}},
		{"headers with-x and void", "h", "", Headers{"x-tenant": "acme", "present": false}, []string{"q3", "q4"}},
		{"headers none", "h", "", nil, []string{}},
		{"plugin type routes everywhere bound", "plugin", "anything", nil, []string{"q3"}},
		{"exchange cycle ends", "loop1", "", nil, []string{"q1"}},
		{"exchange not in topology but bound", "unlisted", "other", nil, []string{"q2"}},
		{"missing exchange", "ghost", "k", nil, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := top.Routes(tc.exchange, tc.key, tc.headers)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Routes(%q, %q) = %q, want %q", tc.exchange, tc.key, got, tc.want)
			}
		})
	}
}

func TestTopicMatches(t *testing.T) {
	tests := []struct {
		pattern, key string
		want         bool
	}{
		{"a.b", "a.b", true}, {"a.b", "a.c", false}, {"*", "a", true}, {"*", "", true}, {"*", "a.b", false},
		{"#", "", true}, {"#", "a.b.c", true}, {"a.#", "a", true}, {"a.#.z", "a.z", true}, {"a.#.z", "a.b.c.z", true},
		{"a.#.z", "a.b.c", false}, {"#.#", "x", true}, {"*.*", "a", false}, {"a.*.#", "a", false}, {"a.*.#", "a.b", true},
		{"", "", true}, {"", "a", false},
	}
	for _, tc := range tests {
		if got := topicMatches(tc.pattern, tc.key); got != tc.want {
			t.Errorf("topicMatches(%q, %q) = %v, want %v", tc.pattern, tc.key, got, tc.want)
		}
	}
	// A pattern of many '#' against a long key that almost matches would
	// take exponential time with backtracking; this returns at once.
	hostile := strings.Repeat("#.a.", 60) + "b"
	if topicMatches(hostile, strings.Repeat("a.", 127)+"c") {
		t.Fatal("hostile pattern matched")
	}
	if !topicMatches(hostile, strings.Repeat("a.", 127)+"b") {
		t.Fatal("hostile pattern did not match")
	}
}

func TestFindParkingQueues(t *testing.T) {
	names := func(ps []ParkingQueue) map[string]ParkingQueue {
		m := map[string]ParkingQueue{}
		for _, p := range ps {
			m[p.Name] = p
		}
		return m
	}

	t.Run("seed 001: fanout parking queue fed by every dead-lettering queue", func(t *testing.T) {
		got := FindParkingQueues(seed001Topology(), nil)
		if len(got) != 1 || got[0].Name != "nghia-dia" || got[0].Vhost != "seed1" || got[0].ByName || got[0].Messages != 6 {
			t.Fatalf("got %+v", got)
		}
		if want := []string{"viec", "viec-qq", "viec2", "viec3"}; !reflect.DeepEqual(got[0].DeadLetteredFrom, want) {
			t.Fatalf("DeadLetteredFrom = %q, want %q", got[0].DeadLetteredFrom, want)
		}
	})

	t.Run("seed 002: buckets and the work queue are not parking", func(t *testing.T) {
		got := FindParkingQueues(seed002Topology(), nil)
		if len(got) != 1 || got[0].Name != "orders.dlq.q" || got[0].ByName {
			t.Fatalf("got %+v", got)
		}
		if want := []string{"orders.main.q"}; !reflect.DeepEqual(got[0].DeadLetteredFrom, want) {
			t.Fatalf("DeadLetteredFrom = %q", got[0].DeadLetteredFrom)
		}
	})

	t.Run("seed 002 with parking-like names on a bucket and its work queue", func(t *testing.T) {
		top := seed002Topology()
		top.Queues = append(top.Queues,
			Queue{Name: "failed-orders.work", Consumers: 0, DeadLetterExchange: "orders.dlx.exchange", HasDeadLetterExchange: true},
			Queue{Name: "failed-orders.retry.dlq", MessageTTL: 5000, DeadLetterExchange: "", HasDeadLetterExchange: true,
				DeadLetterRoutingKey: "failed-orders.work", HasDeadLetterRoutingKey: true},
		)
		got := names(FindParkingQueues(top, nil))
		if _, ok := got["failed-orders.work"]; ok {
			t.Fatalf("work queue fed by a bucket listed as parking: %+v", got)
		}
		if _, ok := got["failed-orders.retry.dlq"]; ok {
			t.Fatalf("bucket listed as parking: %+v", got)
		}
		if want := []string{"failed-orders.work", "orders.main.q"}; !reflect.DeepEqual(got["orders.dlq.q"].DeadLetteredFrom, want) {
			t.Fatalf("orders.dlq.q DeadLetteredFrom = %q, want %q", got["orders.dlq.q"].DeadLetteredFrom, want)
		}
	})

	t.Run("broker-managed retry: main -> bucket -> main, parking after", func(t *testing.T) {
		top := Topology{
			Exchanges: []Exchange{{Name: "work", Type: "direct"}, {Name: "retry", Type: "fanout"}, {Name: "parking", Type: "fanout"}},
			Queues: []Queue{
				{Name: "jobs", DeadLetterExchange: "retry", HasDeadLetterExchange: true},
				{Name: "jobs.wait", MessageTTL: 30000, DeadLetterExchange: "work", HasDeadLetterExchange: true, DeadLetterRoutingKey: "jobs", HasDeadLetterRoutingKey: true},
				{Name: "jobs.poison"},
			},
			Bindings: []Binding{
				{Source: "work", Destination: "jobs", DestinationType: "queue", RoutingKey: "jobs"},
				{Source: "retry", Destination: "jobs.wait", DestinationType: "queue"},
			},
		}
		got := FindParkingQueues(top, nil)
		if len(got) != 0 {
			t.Fatalf("got %+v", got)
		}
		got = FindParkingQueues(top, []string{"poison"})
		if len(got) != 1 || got[0].Name != "jobs.poison" || !got[0].ByName || got[0].DeadLetteredFrom == nil {
			t.Fatalf("by name: %+v", got)
		}
	})

	t.Run("names, patterns, graveyards, loops, default-exchange DLX, e2e", func(t *testing.T) {
		top := Topology{
			Vhost:     "v",
			Exchanges: []Exchange{{Name: "dlx", Type: "direct"}, {Name: "dlx.fan", Type: "fanout"}, {Name: "grave", Type: "fanout"}},
			Queues: []Queue{
				{Name: "Payments_ERROR"},
				{Name: "orders"},
				{Name: "self-loop", MessageTTL: 1000, DeadLetterExchange: "", HasDeadLetterExchange: true, DeadLetterRoutingKey: "self-loop", HasDeadLetterRoutingKey: true},
				{Name: "emails", DeadLetterExchange: "", HasDeadLetterExchange: true, DeadLetterRoutingKey: "emails.held", HasDeadLetterRoutingKey: true},
				{Name: "emails.held"},
				{Name: "sms", DeadLetterExchange: "dlx", HasDeadLetterExchange: true, DeadLetterRoutingKey: "sms", HasDeadLetterRoutingKey: true},
				{Name: "sms.parking"},
				{Name: "unrelated"},
				// A DLQ with a retention TTL that expires into a graveyard stays a DLQ.
				{Name: "sms.dlq", MessageTTL: 604800000, DeadLetterExchange: "grave", HasDeadLetterExchange: true},
				{Name: "graveyard"},
			},
			Bindings: []Binding{
				{Source: "dlx", Destination: "dlx.fan", DestinationType: "exchange", RoutingKey: "sms"},
				{Source: "dlx", Destination: "unrelated", DestinationType: "queue", RoutingKey: "other"},
				{Source: "dlx.fan", Destination: "sms.parking", DestinationType: "queue"},
				{Source: "dlx.fan", Destination: "sms.dlq", DestinationType: "queue"},
				{Source: "grave", Destination: "graveyard", DestinationType: "queue"},
			},
		}
		got := FindParkingQueues(top, nil)
		var order []string
		for _, p := range got {
			order = append(order, p.Name)
			if p.Vhost != "v" {
				t.Fatalf("vhost %q", p.Vhost)
			}
		}
		if want := []string{"Payments_ERROR", "emails.held", "graveyard", "sms.dlq", "sms.parking"}; !reflect.DeepEqual(order, want) {
			t.Fatalf("parking queues %q, want %q", order, want)
		}
		m := names(got)
		if !m["Payments_ERROR"].ByName || len(m["Payments_ERROR"].DeadLetteredFrom) != 0 || m["Payments_ERROR"].DeadLetteredFrom == nil {
			t.Fatalf("Payments_ERROR: %+v", m["Payments_ERROR"])
		}
		for name, from := range map[string][]string{"emails.held": {"emails"}, "sms.parking": {"sms"}, "sms.dlq": {"sms"}, "graveyard": {"sms.dlq"}} {
			if m[name].ByName || !reflect.DeepEqual(m[name].DeadLetteredFrom, from) {
				t.Fatalf("%s: %+v, want from %q", name, m[name], from)
			}
		}
		if got := FindParkingQueues(top, []string{}); len(got) != 4 {
			t.Fatalf("no patterns: only dead-letter targets expected, got %d", len(got))
		}
		if got := FindParkingQueues(top, []string{"", "UNREL"}); len(got) != 5 || names(got)["unrelated"].Name == "" {
			t.Fatalf("custom pattern: %+v", got)
		}
	})
}

// FuzzTopicMatches checks the dynamic-programming matcher against the
// obvious recursive definition on short inputs.
func FuzzTopicMatches(f *testing.F) {
	for _, s := range [][2]string{{"a.#.z", "a.b.z"}, {"*.b", "a.b"}, {"#", ""}, {"#.#.a", "a"}, {"a.*", "a"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, key string) {
		if len(pattern) > 40 || len(key) > 40 {
			return
		}
		p, k := strings.Split(pattern, "."), strings.Split(key, ".")
		if got, want := topicMatches(pattern, key), topicReference(p, k); got != want {
			t.Fatalf("topicMatches(%q, %q) = %v, want %v", pattern, key, got, want)
		}
	})
}

func topicReference(p, k []string) bool {
	if len(p) == 0 {
		return len(k) == 0
	}
	switch p[0] {
	case "#":
		for i := 0; i <= len(k); i++ {
			if topicReference(p[1:], k[i:]) {
				return true
			}
		}
		return false
	case "*":
		return len(k) > 0 && topicReference(p[1:], k[1:])
	}
	return len(k) > 0 && k[0] == p[0] && topicReference(p[1:], k[1:])
}
