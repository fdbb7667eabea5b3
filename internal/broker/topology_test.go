package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

func TestTopologyResolvesEffectiveSettings(t *testing.T) {
	f := newFixture(t, "topology")
	for _, x := range []struct{ name, kind string }{{"orders", "topic"}, {"orders.dlx", "fanout"}, {"audit", "fanout"}} {
		if err := f.ch.ExchangeDeclare(x.name, x.kind, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	f.declare("orders.work", amqp.Table{
		"x-dead-letter-exchange":    "orders.dlx",
		"x-dead-letter-routing-key": "dead",
		"x-message-ttl":             int32(60000),
		"x-max-length":              int64(1000),
		"x-overflow":                "reject-publish-dlx",
	})
	f.declare("billing.work", nil) // its DLX and TTL come from a policy only
	f.declare("both.work", amqp.Table{"x-dead-letter-exchange": "from-arg", "x-message-ttl": int32(60000)})
	f.declare("orders.dlq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int64(4)})
	f.declare("plain", nil)
	for _, b := range []struct{ q, x, key string }{{"orders.work", "orders", "order.*"}, {"orders.dlq", "orders.dlx", ""}} {
		if err := f.ch.QueueBind(b.q, b.key, b.x, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	// An exchange-to-exchange binding: orders -> audit.
	if err := f.ch.ExchangeBind("audit", "#", "orders", false, nil); err != nil {
		t.Fatal(err)
	}
	rh := f.management()
	for name, def := range map[string]rabbithole.PolicyDefinition{
		"billing": {"dead-letter-exchange": "billing.dlx", "message-ttl": 30000},
		"both":    {"dead-letter-exchange": "from-policy", "message-ttl": 5000},
	} {
		if _, err := rh.PutPolicy(f.cfg.Vhost, name, rabbithole.Policy{Pattern: "^" + name + `\.work$`, ApplyTo: "queues", Definition: def}); err != nil {
			t.Fatalf("policy %s: %v", name, err)
		}
	}
	stamp := time.Date(2025, 12, 24, 18, 30, 0, 0, time.UTC)
	f.publishOne("", "plain", amqp.Publishing{Timestamp: stamp, Body: []byte("x")})

	l := f.live()
	var top triage.Topology
	// Policies apply and statistics arrive asynchronously.
	eventually(t, "topology settles", func() string {
		var err error
		if top, err = l.Topology(context.Background()); err != nil {
			return err.Error()
		}
		if q, _ := top.Queue("both.work"); q.Policy != "both" {
			return "policy both not applied yet"
		}
		if q, _ := top.Queue("billing.work"); !q.HasDeadLetterExchange {
			return "policy billing not applied yet"
		}
		if q, _ := top.Queue("plain"); q.HeadPublished.IsZero() || q.Messages != 1 {
			return fmt.Sprintf("plain: no statistics yet (%+v)", q)
		}
		return ""
	})

	if top.Vhost != f.cfg.Vhost {
		t.Errorf("vhost = %q", top.Vhost)
	}
	work, _ := top.Queue("orders.work")
	if work.Type != triage.QueueClassic || work.DeadLetterExchange != "orders.dlx" || !work.HasDeadLetterExchange || work.DLXFromPolicy ||
		work.DeadLetterRoutingKey != "dead" || !work.HasDeadLetterRoutingKey || work.MessageTTL != 60000 ||
		work.MaxLength != 1000 || work.Overflow != "reject-publish-dlx" || work.Arguments["x-message-ttl"] != int64(60000) {
		t.Errorf("orders.work = %+v", work)
	}
	billing, _ := top.Queue("billing.work")
	if billing.DeadLetterExchange != "billing.dlx" || !billing.DLXFromPolicy || billing.MessageTTL != 30000 || billing.Policy != "billing" || billing.HasDeadLetterRoutingKey {
		t.Errorf("billing.work = %+v", billing)
	}
	// The argument names the DLX; the lower TTL of argument and policy applies.
	both, _ := top.Queue("both.work")
	if both.DeadLetterExchange != "from-arg" || both.DLXFromPolicy || both.MessageTTL != 5000 {
		t.Errorf("both.work = %+v", both)
	}
	dlq, _ := top.Queue("orders.dlq")
	if dlq.Type != triage.QueueQuorum || dlq.DeliveryLimit != 4 || dlq.HasDeadLetterExchange {
		t.Errorf("orders.dlq = %+v", dlq)
	}
	plain, _ := top.Queue("plain")
	if !plain.HeadPublished.Equal(stamp) || plain.MessageTTL != 0 || plain.DeliveryLimit != 0 {
		t.Errorf("plain = %+v, want head published %v", plain, stamp)
	}

	exchanges := map[string]string{}
	for _, x := range top.Exchanges {
		exchanges[x.Name] = x.Type
	}
	for name, kind := range map[string]string{"": "direct", "orders": "topic", "orders.dlx": "fanout", "audit": "fanout", "amq.topic": "topic"} {
		if exchanges[name] != kind {
			t.Errorf("exchange %q: type %q, want %q", name, exchanges[name], kind)
		}
	}
	want := []triage.Binding{
		{Source: "orders", Destination: "orders.work", DestinationType: "queue", RoutingKey: "order.*"},
		{Source: "orders.dlx", Destination: "orders.dlq", DestinationType: "queue", RoutingKey: ""},
		{Source: "orders", Destination: "audit", DestinationType: "exchange", RoutingKey: "#"},
		{Source: "", Destination: "plain", DestinationType: "queue", RoutingKey: "plain"}, // the default exchange
	}
	for _, w := range want {
		found := false
		for _, b := range top.Bindings {
			found = found || (b.Source == w.Source && b.Destination == w.Destination && b.DestinationType == w.DestinationType && b.RoutingKey == w.RoutingKey)
		}
		if !found {
			t.Errorf("binding %+v missing from %+v", w, top.Bindings)
		}
	}
}

func TestTopologyOfAVanishedVhostIsNotFound(t *testing.T) {
	f := newFixture(t, "vanish")
	l := f.live()
	rh := f.management()
	if _, err := rh.DeleteVhost(f.cfg.Vhost); err != nil {
		t.Fatal(err)
	}
	_, err := l.Topology(context.Background())
	if want := fmt.Sprintf("vhost %q does not exist", f.cfg.Vhost); err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}
