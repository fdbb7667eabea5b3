package replay

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// replayTopology: exchange "orders" routes order.created to queue "orders",
// which dead-letters through fanout "orders.dlx" into "orders.parking";
// "ledger" routes entry.posted to "ledger".
func replayTopology() triage.Topology {
	return triage.Topology{
		Vhost: "v",
		Queues: []triage.Queue{
			{Name: "orders", HasDeadLetterExchange: true, DeadLetterExchange: "orders.dlx"},
			{Name: "orders.parking"},
			{Name: "ledger"},
		},
		Exchanges: []triage.Exchange{{Name: "", Type: "direct"}, {Name: "orders", Type: "direct"}, {Name: "orders.dlx", Type: "fanout"}, {Name: "ledger", Type: "direct"}},
		Bindings: []triage.Binding{
			{Source: "orders", Destination: "orders", DestinationType: "queue", RoutingKey: "order.created"},
			{Source: "orders.dlx", Destination: "orders.parking", DestinationType: "queue"},
			{Source: "ledger", Destination: "ledger", DestinationType: "queue", RoutingKey: "entry.posted"},
		},
	}
}

func parkedMsg(id string, h triage.Headers, body string) triage.Message {
	return triage.Message{Queue: "orders.parking", Exchange: "orders.dlx", Properties: triage.Properties{MessageID: id}, Headers: h, Body: []byte(body)}
}

func replayInspection(ms ...triage.Message) triage.Inspection {
	top := replayTopology()
	b := triage.Batch{Vhost: "v", Queue: "orders.parking", Messages: ms}
	ts := triage.Analyze(b, top, nil)
	return triage.Inspection{Batch: b, Topology: top, Messages: ts, Groups: triage.GroupMessages(ts)}
}

func TestOriginalRoutePerReason(t *testing.T) {
	when := mustTime("2026-01-02T03:04:05Z")
	// x-death[0] is the latest death (a wait queue on the retry exchange);
	// two entries share queue "orders" and the first-death reason picks the
	// one that holds the original publish.
	rejectedAfterRetry := parkedMsg("rejected-1", triage.Headers{
		"x-death": deathList(
			xdeath("orders", "expired", 2, when, "orders.retry", "order.created.retry"),
			xdeath("orders", "rejected", 1, when, "orders", "order.created"),
		),
		"x-first-death-queue": "orders", "x-first-death-reason": "rejected", "x-first-death-exchange": "orders",
	}, `{}`)
	expiredDefault := parkedMsg("expired-1", triage.Headers{
		"x-death":             deathList(xdeath("orders", "expired", 1, when, "", "orders")),
		"x-first-death-queue": "orders", "x-first-death-reason": "expired", "x-first-death-exchange": "",
	}, `{}`)
	spring := parkedMsg("published-1", triage.Headers{"x-original-exchange": "ledger", "x-original-routingKey": "entry.posted"}, `{}`)
	envelope := parkedMsg("published-2", nil, `{"message_id":"published-2","original_exchange":"ledger","original_routing_key":"entry.posted"}`)
	noFirstDeath := parkedMsg("maxlen-1", triage.Headers{"x-death": deathList(xdeath("orders", "maxlen", 1, when, "orders", "order.created"))}, `{}`)
	nothing := parkedMsg("published-3", nil, `plain text`)

	in := replayInspection(rejectedAfterRetry, expiredDefault, spring, envelope, noFirstDeath, nothing)
	want := map[string]struct {
		route  triage.Route
		known  bool
		reason triage.Reason
	}{
		"rejected-1":  {triage.Route{Exchange: "orders", RoutingKey: "order.created"}, true, triage.ReasonExpired},
		"expired-1":   {triage.Route{Exchange: "", RoutingKey: "orders"}, true, triage.ReasonExpired},
		"published-1": {triage.Route{Exchange: "ledger", RoutingKey: "entry.posted"}, true, triage.ReasonPublished},
		"published-2": {triage.Route{Exchange: "ledger", RoutingKey: "entry.posted"}, true, triage.ReasonPublished},
		"maxlen-1":    {triage.Route{Exchange: "orders", RoutingKey: "order.created"}, true, triage.ReasonMaxlen},
		"published-3": {triage.Route{}, false, triage.ReasonPublished},
	}
	for _, tr := range in.Messages {
		w := want[tr.ID]
		got, ok := OriginalRoute(tr)
		if tr.Reason != w.reason || got != w.route || ok != w.known {
			t.Errorf("%s: reason %s route %v known %v; want %s %v %v", tr.ID, tr.Reason, got, ok, w.reason, w.route, w.known)
		}
	}
}

func TestPlanReplayOriginalRoutesAreAllowedWithoutAllowlist(t *testing.T) {
	when := mustTime("2026-01-02T03:04:05Z")
	var ms []triage.Message
	for _, id := range []string{"a", "b", "c", "d"} {
		ms = append(ms, parkedMsg(id, triage.Headers{
			"x-death":             deathList(xdeath("orders", "rejected", 1, when, "orders", "order.created")),
			"x-first-death-queue": "orders", "x-first-death-reason": "rejected", "x-first-death-exchange": "orders",
		}, `{"amount":1}`))
	}
	p, err := NewPlan(replayInspection(ms...), triage.Selection{Group: &triage.GroupKey{Reason: triage.ReasonRejected, AnyCode: true}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Runnable(); err != nil {
		t.Fatal(err)
	}
	if !p.Allowed || p.Items.Len() != 4 || len(p.Destinations) != 1 || !p.Destinations[0].Original {
		t.Fatalf("plan = %+v", p)
	}
	if !slices.Equal(p.DestinationQueues, []string{"orders"}) || len(p.Sample) != sampleSize {
		t.Errorf("destination queues %v, sample %d", p.DestinationQueues, len(p.Sample))
	}
	if o := p.Options; o.Rate != DefaultRate || o.Canary != DefaultCanary || o.Observe != DefaultObserve || o.CanaryRate != DefaultCanaryRate {
		t.Errorf("defaults not applied: %+v", o)
	}
	if !strings.HasPrefix(p.ID, "rp-") {
		t.Errorf("replay id %q", p.ID)
	}
}

func TestPlanReplayAllowlistAndMissingRoutes(t *testing.T) {
	when := mustTime("2026-01-02T03:04:05Z")
	dead := parkedMsg("dead", triage.Headers{
		"x-death":             deathList(xdeath("orders", "rejected", 1, when, "orders", "order.created")),
		"x-first-death-queue": "orders", "x-first-death-reason": "rejected", "x-first-death-exchange": "orders",
	}, `{}`)
	lost := parkedMsg("lost", nil, `no route here`)
	in := replayInspection(dead, lost)
	ids := triage.Selection{IDs: []string{"dead", "lost", "gone"}}

	p, err := NewPlan(in, ids, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Unroutable, []string{"lost"}) || !slices.Equal(p.Missing, []string{"gone"}) || p.Runnable() == nil {
		t.Fatalf("unroutable %v missing %v runnable %v", p.Unroutable, p.Missing, p.Runnable())
	}
	if !strings.Contains(strings.Join(p.Problems, "\n"), "--to") || !strings.Contains(strings.Join(p.Problems, "\n"), "lost") {
		t.Errorf("problems do not name the message or --to: %v", p.Problems)
	}

	to := triage.Route{Exchange: "ledger", RoutingKey: "entry.posted"}
	p, _ = NewPlan(in, ids, Options{To: &to})
	if p.Allowed || !slices.Equal(p.Disallowed, []triage.Route{to}) || p.Runnable() == nil {
		t.Errorf("a destination outside replay.allow was allowed: %+v", p)
	}
	p, _ = NewPlan(in, ids, Options{To: &to, Allow: []string{"billing:*", "ledger:entry.*"}})
	if !p.Allowed || p.Runnable() != nil || p.Items.Len() != 2 {
		t.Errorf("replay.allow ledger:entry.* did not allow %v: %v", to, p.Problems)
	}

	// --to naming the message's own original route needs no allowlist.
	own := triage.Route{Exchange: "orders", RoutingKey: "order.created"}
	p, _ = NewPlan(in, triage.Selection{IDs: []string{"dead"}}, Options{To: &own})
	if !p.Allowed || !p.Items.At(0).Original || p.Runnable() != nil {
		t.Errorf("the message's own route was refused: %+v", p)
	}

	if _, err := NewPlan(in, ids, Options{To: &to, Allow: []string{"["}}); err == nil {
		t.Error("a bad replay.allow pattern was accepted")
	}
	if _, err := NewPlan(in, triage.Selection{}, Options{}); err == nil {
		t.Error("an empty selection was accepted")
	}
}

func TestPlanReplayRefusesMissingExchangeAndLoops(t *testing.T) {
	in := replayInspection(parkedMsg("x", nil, `{}`))
	for _, c := range []struct {
		to   triage.Route
		want string
	}{
		{triage.Route{Exchange: "nowhere", RoutingKey: "k"}, "does not exist"},
		{triage.Route{Exchange: "orders.dlx", RoutingKey: "k"}, "routes back into orders.parking"},
	} {
		p, err := NewPlan(in, triage.Selection{IDs: []string{"x"}}, Options{To: &c.to, Allow: []string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Runnable(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("to %v: %v, want %q", c.to, err, c.want)
		}
	}
}

func TestReplayHeadersKeepHistoryInOwnHeaders(t *testing.T) {
	when := mustTime("2026-01-02T03:04:05Z")
	deaths := deathList(xdeath("orders", "rejected", 4, when, "orders", "order.created"))
	m := parkedMsg("m", triage.Headers{"x-death": deaths, "tenant": "acme", "dlqt-attempts": int64(9)}, `{}`)
	at := time.Date(2026, 2, 3, 4, 5, 6, 700, time.UTC)
	h := CopyHeaders(m, "m", "rp-1", 4, at)
	if h["tenant"] != "acme" || h["x-death"] == nil || h[triage.HeaderReplayID] != "rp-1" || h[triage.HeaderReplayItem] != "m" {
		t.Errorf("headers = %v", h)
	}
	if h[triage.HeaderReplayedAt] != at.Truncate(time.Second) {
		t.Errorf("replayed-at %v", h[triage.HeaderReplayedAt])
	}
	if h[triage.HeaderAttempts] != int64(9) {
		t.Errorf("dlqt-attempts lowered from 9 to %v", h[triage.HeaderAttempts])
	}
	if d, ok := h[triage.HeaderDeaths].([]any); !ok || len(d) != 1 {
		t.Errorf("dlqt-deaths = %#v", h[triage.HeaderDeaths])
	}
	if _, had := m.Headers[triage.HeaderReplayID]; had {
		t.Error("CopyHeaders changed the source message's headers")
	}
	// A copy's identity is the same as its source's, with or without a message_id.
	src := triage.Message{Body: []byte("x"), Headers: triage.Headers{"tenant": "acme"}}
	cp := src
	cp.Headers = CopyHeaders(src, "i", "rp-1", 1, at)
	if a, b := triage.Identify([]triage.Message{src}, nil), triage.Identify([]triage.Message{cp}, nil); a[0] != b[0] {
		t.Errorf("a replayed copy hashes to %s, its source to %s", b[0], a[0])
	}
}
