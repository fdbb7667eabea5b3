package doctor

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// byPolicy is a classic queue whose DLX a policy sets, so that it draws no
// dlx-by-argument advisory and each case shows only what it is about.
func byPolicy(name, dlx string) triage.Queue {
	return triage.Queue{Name: name, Type: triage.QueueClassic, DeadLetterExchange: dlx, HasDeadLetterExchange: true, DLXFromPolicy: true, Policy: "dlx"}
}

func withTTL(q triage.Queue, ms int64) triage.Queue    { q.MessageTTL = ms; return q }
func withConsumers(q triage.Queue, n int) triage.Queue { q.Consumers = n; return q }
func withKey(q triage.Queue, key string) triage.Queue {
	q.DeadLetterRoutingKey, q.HasDeadLetterRoutingKey = key, true
	return q
}
func plainQueue(name string) triage.Queue { return triage.Queue{Name: name, Type: triage.QueueClassic} }
func bind(x, q, key string) triage.Binding {
	return triage.Binding{Source: x, Destination: q, DestinationType: "queue", RoutingKey: key}
}
func exchanges(kv ...string) (out []triage.Exchange) { // name, type, name, type...
	out = append(out, triage.Exchange{Name: "", Type: "direct"})
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, triage.Exchange{Name: kv[i], Type: kv[i+1]})
	}
	return out
}

// summary is "severity kind queue" of each finding, in the order given.
func summary(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Severity + " " + f.Kind + " " + f.Queue
	}
	return out
}

func diagnose(t triage.Topology) []Finding { return Diagnose(t, triage.FindParkingQueues(t, nil)) }

func TestDiagnoseFindsEachKind(t *testing.T) {
	cases := []struct {
		name string
		top  triage.Topology
		want []string
		// words that the finding's detail must name (queues, exchanges, keys)
		detail []string
	}{
		{
			name: "seed 001 TTL loop: a queue with a TTL dead-letters into itself",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges("loops", "direct"),
				Queues:   []triage.Queue{withTTL(byPolicy("wait", "loops"), 1000)},
				Bindings: []triage.Binding{bind("loops", "wait", "wait")}},
			want:   []string{"error dlx-cycle-silent-drop wait"},
			detail: []string{"wait -> exchange loops -> wait", "message TTL 1000 ms (1s)"},
		},
		{
			name: "TTL loop through the default exchange: no routing key, so the message's own key (the queue name) brings it back",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges(),
				Queues: []triage.Queue{withTTL(byPolicy("wait", ""), 500)}},
			want:   []string{"error dlx-cycle-silent-drop wait"},
			detail: []string{"wait -> the default exchange -> wait"},
		},
		{
			name: "two queues that only expire or overflow, dead-lettering into each other",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges("ax", "fanout", "bx", "fanout"),
				Queues: []triage.Queue{
					withTTL(byPolicy("a", "bx"), 100),
					func() triage.Queue { q := byPolicy("b", "ax"); q.MaxLength = 5; return q }(),
				},
				Bindings: []triage.Binding{bind("ax", "a", ""), bind("bx", "b", "")}},
			want:   []string{"error dlx-cycle-silent-drop a"},
			detail: []string{"a -> exchange bx -> b -> exchange ax -> a", "length limit 5, overflow drop-head"},
		},
		{
			name: "seed 001 reject loop: a consumed queue dead-letters into itself, no delay",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges("loops", "direct"),
				Queues:   []triage.Queue{withConsumers(byPolicy("work", "loops"), 1)},
				Bindings: []triage.Binding{bind("loops", "work", "work")}},
			want:   []string{"error dlx-cycle-infinite work"},
			detail: []string{"work -> exchange loops -> work", "1 consumer", "no delay"},
		},
		{
			name: "reject loop with a dead-letter routing key naming the queue itself on the default exchange",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges(),
				Queues: []triage.Queue{withKey(byPolicy("work", ""), "work")}},
			want:   []string{"error dlx-cycle-infinite work"},
			detail: []string{"no consumer yet"},
		},
		{
			name: "broker-run retry: the work queue's DLX feeds a TTL wait queue whose DLX feeds the work queue",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges("work.x", "direct", "retry.x", "direct"),
				Queues: []triage.Queue{
					withConsumers(byPolicy("work", "retry.x"), 2),
					withTTL(byPolicy("wait", "work.x"), 5000),
				},
				Bindings: []triage.Binding{bind("work.x", "work", "work"), bind("retry.x", "wait", "work")}},
			want:   []string{"warning dlx-cycle-infinite work"},
			detail: []string{"work -> exchange retry.x -> wait -> exchange work.x -> work", "waiting in wait", "2 consumers"},
		},
		{
			name: "a queue with a TTL and a consumer on a self-loop: rejection keeps it going, the TTL slows it",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges("loops", "fanout"),
				Queues:   []triage.Queue{withConsumers(withTTL(byPolicy("work", "loops"), 100), 1)},
				Bindings: []triage.Binding{bind("loops", "work", "")}},
			want: []string{"warning dlx-cycle-infinite work"},
		},
		{
			name: "a consumed quorum queue with a delivery limit on a self-loop: rejects spin, requeues past the limit vanish",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges("loops", "direct"),
				Queues: []triage.Queue{func() triage.Queue {
					q := withConsumers(byPolicy("qq", "loops"), 1)
					q.Type, q.DeliveryLimit = triage.QueueQuorum, 3
					return q
				}()},
				Bindings: []triage.Binding{bind("loops", "qq", "qq")}},
			want:   []string{"error dlx-cycle-infinite qq"},
			detail: []string{"qq (delivery limit 3) are not rejected but dropped"},
		},
		{
			name: "an unconsumed quorum queue with a delivery limit on a self-loop only dies by its limit: dropped",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges("loops", "direct"),
				Queues: []triage.Queue{func() triage.Queue {
					q := byPolicy("qq", "loops")
					q.Type, q.DeliveryLimit = triage.QueueQuorum, 3
					return q
				}()},
				Bindings: []triage.Binding{bind("loops", "qq", "qq")}},
			want:   []string{"error dlx-cycle-silent-drop qq"},
			detail: []string{"delivery limit 3"},
		},
		{
			name:   "DLX names an exchange that does not exist",
			top:    triage.Topology{Vhost: "v", Exchanges: exchanges(), Queues: []triage.Queue{byPolicy("orders", "orders.dlx")}},
			want:   []string{"error dlx-missing-exchange orders"},
			detail: []string{"orders.dlx", "does not exist", "set by policy dlx"},
		},
		{
			name: "seed 001: a topic DLX with a narrow binding makes dead letters die twice",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges("events", "direct", "dead", "topic"),
				Queues:   []triage.Queue{byPolicy("orders", "dead"), plainQueue("graveyard")},
				Bindings: []triage.Binding{bind("events", "orders", "order.created"), bind("dead", "graveyard", "payment.#")}},
			want:   []string{"error dlx-unroutable orders"},
			detail: []string{`"order.created"`, "exchange dead (topic"},
		},
		{
			name: "a dead-letter routing key nothing is bound for",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges("dead", "direct"),
				Queues:   []triage.Queue{withKey(byPolicy("orders", "dead"), "dead.orders"), plainQueue("graveyard")},
				Bindings: []triage.Binding{bind("dead", "graveyard", "dead.order")}},
			want:   []string{"error dlx-unroutable orders"},
			detail: []string{`"dead.orders"`, "its dead-letter routing key"},
		},
		{
			name: "only some of the keys a queue's messages carry are bound on the DLX",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges("events", "direct", "dead", "direct"),
				Queues:   []triage.Queue{byPolicy("orders", "dead"), plainQueue("graveyard")},
				Bindings: []triage.Binding{bind("events", "orders", "a"), bind("events", "orders", "b"), bind("dead", "graveyard", "a")}},
			want:   []string{"error dlx-unroutable orders"},
			detail: []string{`"b"`, `only "a" route`},
		},
		{
			name: "keys unknown (fanout arrival) and a DLX with no binding at all",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges("in", "fanout", "dead", "direct"),
				Queues:   []triage.Queue{byPolicy("orders", "dead")},
				Bindings: []triage.Binding{bind("in", "orders", "")}},
			want:   []string{"error dlx-unroutable orders"},
			detail: []string{"any key"},
		},
		{
			name: "DLX routing key names a queue that does not exist on the default exchange",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges(),
				Queues: []triage.Queue{withKey(byPolicy("orders", ""), "orders.dlq")}},
			want: []string{"error dlx-unroutable orders"},
		},
		{
			name: "an alternate exchange on the DLX takes the keys nothing is bound for (dead letters honour it)",
			top: triage.Topology{Vhost: "v",
				Exchanges: append(exchanges("events", "direct", "catch", "fanout"), triage.Exchange{Name: "dead", Type: "topic", AlternateExchange: "catch"}),
				Queues:    []triage.Queue{byPolicy("orders", "dead"), plainQueue("graveyard"), plainQueue("caught")},
				Bindings:  []triage.Binding{bind("events", "orders", "order.created"), bind("dead", "graveyard", "payment.#"), bind("catch", "caught", "")}},
			want: nil,
		},
		{
			name: "an alternate exchange that routes nowhere either",
			top: triage.Topology{Vhost: "v",
				Exchanges: append(exchanges("events", "direct", "catch", "fanout"), triage.Exchange{Name: "dead", Type: "topic", AlternateExchange: "catch"}),
				Queues:    []triage.Queue{byPolicy("orders", "dead"), plainQueue("graveyard")},
				Bindings:  []triage.Binding{bind("events", "orders", "order.created"), bind("dead", "graveyard", "payment.#")}},
			want:   []string{"error dlx-unroutable orders"},
			detail: []string{"nor in its alternate exchange catch"},
		},
		{
			name: "a length limit, drop-head by default, no DLX",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges(),
				Queues: []triage.Queue{{Name: "capped", Type: triage.QueueClassic, MaxLength: 10}}},
			want:   []string{"warning maxlen-without-dlx capped"},
			detail: []string{"at most 10 messages"},
		},
		{
			name: "seed 002 common error 1: the retry bucket's routing key reaches no queue",
			top: func() triage.Topology {
				top := seed002Topology()
				for i := range top.Queues {
					top.Queues[i].DLXFromPolicy = true
				}
				top.Queues[1].DeadLetterRoutingKey = "order" // orders.retry.2s.q: a typo
				top.Queues[0].DeadLetterRoutingKey, top.Queues[0].HasDeadLetterRoutingKey = "orders.dlq", true
				return top
			}(),
			want:   []string{"error retry-route-mismatch orders.retry.2s.q"},
			detail: []string{`routing key "order"`, `orders.main.q with key "orders"`, "orders.exchange"},
		},
		{
			name: "parking queue with a consumer",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges("dlx", "fanout"),
				Queues:   []triage.Queue{byPolicy("orders", "dlx"), withConsumers(plainQueue("orders.parking"), 1)},
				Bindings: []triage.Binding{bind("dlx", "orders.parking", "")}},
			want:   []string{"warning parking-has-consumers orders.parking"},
			detail: []string{"1 consumer", "dead letters of orders"},
		},
		{
			name: "a queue taken for parking by its name alone says so; a stream's consumers take nothing away",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges(),
				Queues: []triage.Queue{withConsumers(plainQueue("payments.failed"), 3), {Name: "audit.dlq", Type: triage.QueueStream, Consumers: 2}}},
			want:   []string{"warning parking-has-consumers payments.failed", "advisory parking-by-name audit.dlq"},
			detail: []string{"3 consumers", "by its name alone (name failed;", "parking_patterns"},
		},
		{
			name: "NServiceBus's error queue, fed by no DLX, says the rule that found it",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges(),
				Queues: []triage.Queue{{Name: "error", Type: triage.QueueClassic, Messages: 26}, plainQueue("Billing_error")}},
			want:   []string{"advisory parking-by-name Billing_error", "advisory parking-by-name error"},
			detail: []string{"Queue Billing_error is listed as a parking queue by its name (name *_error (MassTransit))"},
		},
		{
			name: "parking queues with a TTL, a quorum delivery limit, a length limit",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges(),
				Queues: []triage.Queue{
					withTTL(plainQueue("a.dlq"), 60000),
					{Name: "b.dlq", Type: triage.QueueQuorum, DeliveryLimit: 5},
					{Name: "c.dlq", Type: triage.QueueClassic, MaxLength: 100, Overflow: "reject-publish"},
					// A drop-head limit on a parking queue is said once, here, not also as maxlen-without-dlx.
					{Name: "d.dlq", Type: triage.QueueClassic, MaxLength: 100},
				}},
			want: []string{
				"warning parking-loses-messages a.dlq",
				"warning parking-loses-messages b.dlq",
				"warning parking-loses-messages c.dlq",
				"warning parking-loses-messages d.dlq",
			},
			detail: []string{"message TTL 60000 ms (1m0s)", "dropped (it has no dead-letter exchange)", "Remove the message TTL from a.dlq"},
		},
		{
			name: "DLX set by queue argument",
			top: triage.Topology{Vhost: "v", Exchanges: exchanges("dlx", "fanout"),
				Queues:   []triage.Queue{{Name: "orders", Type: triage.QueueClassic, DeadLetterExchange: "dlx", HasDeadLetterExchange: true}, plainQueue("graveyard")},
				Bindings: []triage.Binding{bind("dlx", "graveyard", "")}},
			want:   []string{"advisory dlx-by-argument orders"},
			detail: []string{"set_policy -p v NAME '^orders$' '{\"dead-letter-exchange\":\"dlx\"}'"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := diagnose(c.top)
			if got := summary(fs); !slices.Equal(got, c.want) {
				t.Fatalf("findings:\n  got  %q\n  want %q", got, c.want)
			}
			for _, f := range fs {
				if f.Detail == "" || f.Fix == "" {
					t.Errorf("%s: empty detail or fix: %+v", f.Kind, f)
				}
			}
			for _, w := range c.detail {
				if !strings.Contains(fs[0].Detail+" "+fs[0].Fix, w) {
					t.Errorf("detail of %s does not say %q:\n%s\nfix: %s", fs[0].Kind, w, fs[0].Detail, fs[0].Fix)
				}
			}
		})
	}
}

func TestDiagnoseNamesTheExchangeOfEachFinding(t *testing.T) {
	top := triage.Topology{Vhost: "v", Exchanges: exchanges("dead", "topic"),
		Queues:   []triage.Queue{byPolicy("orders", "dead"), byPolicy("lost", "gone"), plainQueue("graveyard")},
		Bindings: []triage.Binding{bind("dead", "graveyard", "payment.#")}}
	got := map[string]string{}
	for _, f := range diagnose(top) {
		got[f.Kind+" "+f.Queue] = f.Exchange
	}
	want := map[string]string{"dlx-unroutable orders": "dead", "dlx-missing-exchange lost": "gone"}
	if len(got) != len(want) || got["dlx-unroutable orders"] != "dead" || got["dlx-missing-exchange lost"] != "gone" {
		t.Fatalf("exchanges by finding: got %v, want %v", got, want)
	}
}

// The seed topologies are what a sound setup looks like: their only errors
// are the ones the seeds themselves warn about.
func TestDiagnoseSeedTopologies(t *testing.T) {
	t.Run("seed 001 graveyard: a fanout DLX takes every reason; only the argument-set DLXs are noted", func(t *testing.T) {
		want := []string{
			"advisory dlx-by-argument viec",
			"advisory dlx-by-argument viec-qq",
			"advisory dlx-by-argument viec2",
			"advisory dlx-by-argument viec3",
		}
		if got := summary(diagnose(seed001Topology())); !slices.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
	t.Run("seed 002 app-run retry: no cycle; the work queue's nacks would die twice", func(t *testing.T) {
		// The article's own topology: orders.main.q dead-letters into
		// orders.dlx.exchange with its own key "orders", but the DLQ is bound
		// with "orders.dlq". Its app never nacks, so nothing dies there today,
		// yet one nack would lose the message: a real finding.
		want := []string{
			"error dlx-unroutable orders.main.q",
			"advisory dlx-by-argument orders.main.q",
			"advisory dlx-by-argument orders.retry.16s.q",
			"advisory dlx-by-argument orders.retry.2s.q",
			"advisory dlx-by-argument orders.retry.4s.q",
			"advisory dlx-by-argument orders.retry.8s.q",
		}
		if got := summary(diagnose(seed002Topology())); !slices.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
	t.Run("seed 002 with the work queue's dead-letter routing key set (the demo scenario): nothing but advisories", func(t *testing.T) {
		top := seed002Topology()
		top.Queues[0].DeadLetterRoutingKey, top.Queues[0].HasDeadLetterRoutingKey = "orders.dlq", true
		for _, f := range diagnose(top) {
			if f.Severity != SeverityAdvisory {
				t.Errorf("unexpected finding: %+v", f)
			}
		}
	})
}

func TestDiagnoseOrdersBySeverityThenQueue(t *testing.T) {
	top := triage.Topology{Vhost: "v", Exchanges: exchanges("loops", "direct"),
		Queues: []triage.Queue{
			{Name: "a.capped", Type: triage.QueueClassic, MaxLength: 3},
			{Name: "b.arg", Type: triage.QueueClassic, DeadLetterExchange: "missing", HasDeadLetterExchange: true},
			withTTL(byPolicy("c.loop", "loops"), 10),
			withTTL(plainQueue("d.dlq"), 10),
		},
		Bindings: []triage.Binding{bind("loops", "c.loop", "c.loop")}}
	want := []string{
		"error dlx-missing-exchange b.arg",
		"error dlx-cycle-silent-drop c.loop",
		"warning maxlen-without-dlx a.capped",
		"warning parking-loses-messages d.dlq",
		"advisory dlx-by-argument b.arg",
	}
	if got := summary(diagnose(top)); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if !HasErrors(diagnose(top)) || HasErrors(diagnose(seed001Topology())) {
		t.Fatal("HasErrors disagrees with the severities")
	}
}

func TestFindingJSONFieldNames(t *testing.T) {
	b, err := json.Marshal(Finding{Kind: "k", Severity: "s", Queue: "q", Exchange: "x", Detail: "d", Fix: "f"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"k","severity":"s","queue":"q","exchange":"x","detail":"d","fix":"f"}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}

// BenchmarkDiagnose measures a large vhost: 2,000 work queues on a topic
// exchange, each dead-lettering through a topic DLX into one of 200 parking
// queues, and 1,000 retry buckets.
func BenchmarkDiagnose(b *testing.B) {
	top := triage.Topology{Vhost: "big", Exchanges: exchanges("work", "topic", "dead", "topic")}
	for i := range 2000 {
		name := fmt.Sprintf("svc%d.work", i)
		top.Queues = append(top.Queues, withConsumers(byPolicy(name, "dead"), 1))
		top.Bindings = append(top.Bindings, bind("work", name, fmt.Sprintf("svc%d.event", i)))
	}
	for i := range 200 {
		name := fmt.Sprintf("svc%d.dlq", i)
		top.Queues = append(top.Queues, plainQueue(name))
		top.Bindings = append(top.Bindings, bind("dead", name, fmt.Sprintf("svc%d.#", i)))
	}
	for i := range 1000 {
		top.Queues = append(top.Queues, withKey(withTTL(byPolicy(fmt.Sprintf("svc%d.retry", i), "work"), 1000), fmt.Sprintf("svc%d.event", i)))
	}
	parking := triage.FindParkingQueues(top, nil)
	b.ResetTimer()
	for range b.N {
		Diagnose(top, parking)
	}
}
