package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/demo"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// These tests read the broker with raw AMQP and the management API only, so
// that what they prove about the scenarios does not depend on dlqt's reader.

func loadScenarios(t *testing.T, cfg broker.Config) demo.Scenarios {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	sc, err := demo.LoadScenarios(ctx, cfg)
	if err != nil {
		t.Fatalf("LoadScenarios: %v", err)
	}
	t.Logf("scenarios settled in %v", time.Since(start).Round(time.Millisecond))
	return sc
}

func TestScenariosAreDeadLetteredByTheBroker(t *testing.T) {
	t.Parallel()
	cfg := brokertest.NewVhost(t, "scenario")
	sc := loadScenarios(t, cfg)
	conn := dialVhost(t, cfg)

	var names []string
	for _, p := range sc.Parking {
		names = append(names, p.Queue)
	}
	wantNames := []string{"billing.parking", "payments.parking", "orders.dlq.q", "legacy.events.failed"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("parking queues = %v, want %v", names, wantNames)
	}

	// Depths as the broker reports them, and nobody left consuming.
	for _, p := range sc.Parking {
		assertDepth(t, conn, p.Queue, len(p.Messages))
	}
	for _, q := range sc.NotParking {
		want := 0
		if q == "billing.exports" {
			want = 2 // its x-max-length: the three oldest died of maxlen
		}
		assertDepth(t, conn, q, want)
	}

	v := brokerVersion(t, cfg)
	for _, p := range sc.Parking {
		t.Run(p.Queue, func(t *testing.T) {
			ds := peek(t, conn, p.Queue, len(p.Messages))
			assertParkedAsProduced(t, p, ds, v)
			assertDepth(t, conn, p.Queue, len(p.Messages)) // the peek put them all back
		})
	}

	t.Run("the reminders' DLX comes from a policy", func(t *testing.T) {
		q := managementQueue(t, cfg, "billing.reminders")
		if q.Policy != "billing-reminders-dlx" {
			t.Errorf("billing.reminders policy = %q, want billing-reminders-dlx", q.Policy)
		}
		if _, ok := q.Arguments["x-dead-letter-exchange"]; ok {
			t.Errorf("billing.reminders has a DLX argument %v; the policy alone should set it", q.Arguments)
		}
	})
	t.Run("payments.parking is a quorum queue with a delivery limit", func(t *testing.T) {
		q := managementQueue(t, cfg, "payments.parking")
		if q.Type != triage.QueueQuorum {
			t.Errorf("type = %q, want quorum", q.Type)
		}
		if n, _ := q.Arguments["x-delivery-limit"].(float64); n != 5 {
			t.Errorf("x-delivery-limit = %v, want 5", q.Arguments["x-delivery-limit"])
		}
	})
	t.Run("markers are planted", func(t *testing.T) {
		if len(sc.Secrets) == 0 || len(sc.Hostile) == 0 {
			t.Fatalf("no markers: secrets %q, hostile %q", sc.Secrets, sc.Hostile)
		}
		var raw []byte
		for _, p := range sc.Parking {
			for _, d := range peek(t, conn, p.Queue, len(p.Messages)) {
				raw = append(raw, d.Body...)
				for _, v := range d.Headers {
					if s, ok := v.(string); ok {
						raw = append(raw, s...)
					}
				}
			}
		}
		for _, s := range sc.Secrets {
			if !bytes.Contains(raw, []byte(s)) {
				t.Errorf("secret %q is in no parked message", s)
			}
		}
		for _, h := range sc.Hostile {
			if !bytes.Contains(raw, []byte(h)) {
				t.Errorf("hostile marker %q is in no parked message raw", h)
			}
		}
	})
}

func TestLoadingScenariosTwiceDoublesTheMessages(t *testing.T) {
	t.Parallel()
	cfg := brokertest.NewVhost(t, "scenario2")
	first := loadScenarios(t, cfg)
	second := loadScenarios(t, cfg)
	conn := dialVhost(t, cfg)
	for _, p := range second.Parking {
		want := 2 * len(p.Messages)
		if p.Queue == "billing.parking" {
			// The second call's five exports also push out the two the
			// first call left in billing.exports.
			want += 2
		}
		if got := second.Depths[p.Queue]; got != want {
			t.Errorf("%s after two loads: Depths says %d, want %d", p.Queue, got, want)
		}
		assertDepth(t, conn, p.Queue, want)
		if f, ok := first.Queue(p.Queue); !ok || !slices.Equal(f.MessageIDs(), p.MessageIDs()) {
			t.Errorf("%s: the two calls describe different sets", p.Queue)
		}
	}
	assertDepth(t, conn, "billing.exports", 2)
}

// assertParkedAsProduced checks each parked message against the expectation
// with its message id (or, for id-less ones, against the id-less ones).
// recordedDeaths are the deaths of a produced message that broker version v
// keeps in x-death. The order worker republishes each retry with the
// x-death it got; 3.13 and 4.x ignore a client's x-death, so of an
// application-parked message only the last death, the one the broker
// recorded, is left.
func recordedDeaths(want demo.Produced, v triage.BrokerVersion) []demo.DeathStep {
	if v.AtLeast(3, 13) && want.Reason == triage.ReasonPublished && len(want.Deaths) > 1 {
		return want.Deaths[len(want.Deaths)-1:]
	}
	return want.Deaths
}

func brokerVersion(t *testing.T, cfg broker.Config) triage.BrokerVersion {
	t.Helper()
	rh, err := cfg.ManagementClient()
	if err != nil {
		t.Fatal(err)
	}
	ov, err := rh.Overview()
	if err != nil {
		t.Fatal(err)
	}
	return triage.ParseBrokerVersion(ov.RabbitMQVersion)
}

func assertParkedAsProduced(t *testing.T, p demo.ParkingScenario, ds []amqp.Delivery, v triage.BrokerVersion) {
	t.Helper()
	if len(ds) != len(p.Messages) {
		t.Fatalf("read %d messages, produced %d", len(ds), len(p.Messages))
	}
	seen := map[string]int{}
	for _, d := range ds {
		i := slices.IndexFunc(p.Messages, func(m demo.Produced) bool { return m.MessageID == d.MessageId })
		if i < 0 {
			t.Errorf("unexpected message %q in %s", d.MessageId, p.Queue)
			continue
		}
		seen[d.MessageId]++
		want := p.Messages[i]
		want.Deaths = recordedDeaths(want, v)
		deaths := xDeaths(t, d.Headers)
		for _, step := range want.Deaths {
			if deaths[step] < 1 {
				t.Errorf("%s: no x-death %s/%s in %v", d.MessageId, step.Queue, step.Reason, deaths)
			}
		}
		if len(want.Deaths) == 0 && len(deaths) != 0 {
			t.Errorf("%s: published straight here, yet x-death = %v", d.MessageId, deaths)
		}
		if len(want.Deaths) != len(deaths) {
			t.Errorf("%s: %d x-death entries, want %d (%v)", d.MessageId, len(deaths), len(want.Deaths), deaths)
		}
		if len(want.Deaths) > 0 {
			first := want.Deaths[0]
			if q, r := d.Headers["x-first-death-queue"], d.Headers["x-first-death-reason"]; q != first.Queue || r != string(first.Reason) {
				t.Errorf("%s: first death %v/%v, want %s/%s", d.MessageId, q, r, first.Queue, first.Reason)
			}
		}
		if got := headerInt(d.Headers["x-retry-count"]); got != want.RetryCount {
			t.Errorf("%s: x-retry-count = %d, want %d", d.MessageId, got, want.RetryCount)
		}
		if want.Reason == triage.ReasonPublished && want.RetryCount > 0 {
			assertFailureBlock(t, d, want)
		}
	}
	for _, m := range p.Messages {
		n := 0
		for _, o := range p.Messages {
			if o.MessageID == m.MessageID {
				n++
			}
		}
		if seen[m.MessageID] != n {
			t.Errorf("message %q read %d times, produced %d", m.MessageID, seen[m.MessageID], n)
		}
	}
}

// assertFailureBlock checks the order worker's give-up publish: the retry
// headers and the envelope's failure block.
func assertFailureBlock(t *testing.T, d amqp.Delivery, want demo.Produced) {
	t.Helper()
	for _, h := range []string{"x-last-error", "x-last-error-time", "x-error", "x-failed-at"} {
		if s, _ := d.Headers[h].(string); s == "" {
			t.Errorf("%s: header %s missing", d.MessageId, h)
		}
	}
	var env struct {
		EventType string `json:"event_type"`
		Failure   struct {
			ReasonCode    string `json:"reason_code"`
			Consumer      string `json:"consumer"`
			Attempt       int    `json:"attempt"`
			FirstFailedAt string `json:"first_failed_at"`
			LastFailedAt  string `json:"last_failed_at"`
		} `json:"failure"`
	}
	if err := json.Unmarshal(d.Body, &env); err != nil {
		t.Fatalf("%s: body is not an envelope: %v", d.MessageId, err)
	}
	f := env.Failure
	if f.ReasonCode != want.ReasonCode || f.Attempt != want.RetryCount+1 || f.Consumer == "" || env.EventType != want.EventType {
		t.Errorf("%s: envelope %+v, want code %s attempt %d event %s", d.MessageId, env, want.ReasonCode, want.RetryCount+1, want.EventType)
	}
	first, err1 := time.Parse(time.RFC3339Nano, f.FirstFailedAt)
	last, err2 := time.Parse(time.RFC3339Nano, f.LastFailedAt)
	if err1 != nil || err2 != nil || last.Before(first) {
		t.Errorf("%s: failure times %q .. %q", d.MessageId, f.FirstFailedAt, f.LastFailedAt)
	}
}

func xDeaths(t *testing.T, h amqp.Table) map[demo.DeathStep]int64 {
	t.Helper()
	out := map[demo.DeathStep]int64{}
	raw, ok := h["x-death"]
	if !ok {
		return out
	}
	entries, ok := raw.([]any)
	if !ok {
		t.Fatalf("x-death is %T", raw)
	}
	for _, e := range entries {
		tab, ok := e.(amqp.Table)
		if !ok {
			t.Fatalf("x-death entry is %T", e)
		}
		q, _ := tab["queue"].(string)
		r, _ := tab["reason"].(string)
		n, _ := tab["count"].(int64)
		out[demo.DeathStep{Queue: q, Reason: triage.Reason(r)}] = n
	}
	return out
}

func headerInt(v any) int {
	switch n := v.(type) {
	case int32:
		return int(n)
	case int64:
		return int(n)
	case int16:
		return int(n)
	case int8:
		return int(n)
	}
	return 0
}

func dialVhost(t *testing.T, cfg broker.Config) *amqp.Connection {
	t.Helper()
	u, err := url.Parse(cfg.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + cfg.Vhost
	conn, err := amqp.Dial(u.String())
	if err != nil {
		t.Fatalf("dial vhost %s: %v", cfg.Vhost, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// assertDepth waits (boundedly) until queue holds want messages and no
// consumer: a quorum queue settles a Nack and a channel close asynchronously,
// so right after a browse its depth and consumer count lag a moment.
func assertDepth(t *testing.T, conn *amqp.Connection, queue string, want int) {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		if err != nil {
			t.Fatalf("passive declare %s: %v", queue, err)
		}
		if q.Messages == want && q.Consumers == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: %d messages and %d consumers, want %d and none", queue, q.Messages, q.Consumers, want)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// peek reads n messages by holding them unacked, then releases them all in
// one Nack(multiple, requeue), the way dlqt browses (docs/ARCHITECTURE.md).
func peek(t *testing.T, conn *amqp.Connection, queue string, n int) []amqp.Delivery {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	deliveries, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatalf("consume %s: %v", queue, err)
	}
	var out []amqp.Delivery
	timeout := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case d := <-deliveries:
			out = append(out, d)
		case <-timeout:
			t.Fatalf("%s: read %d of %d messages", queue, len(out), n)
		}
	}
	if n > 0 {
		if err := out[n-1].Nack(true, true); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func managementQueue(t *testing.T, cfg broker.Config, name string) *rabbithole.DetailedQueueInfo {
	t.Helper()
	user, pass := "guest", "guest"
	if u, err := url.Parse(cfg.AMQPURL); err == nil && u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}
	rh, err := rabbithole.NewClient(cfg.MgmtURL, user, pass)
	if err != nil {
		t.Fatal(err)
	}
	q, err := rh.GetQueue(cfg.Vhost, name)
	if err != nil {
		t.Fatalf("management: queue %s: %v", name, err)
	}
	return q
}

// TestReadPathUnderstandsScenarios runs dlqt's whole read path (the live
// reader and the triage engine) over the scenarios and checks it tells
// exactly what was produced, without moving a single message.
func TestReadPathUnderstandsScenarios(t *testing.T) {
	t.Parallel()
	cfg := brokertest.NewVhost(t, "readpath")
	sc := loadScenarios(t, cfg)
	conn := dialVhost(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	live, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { live.Close() })

	pqs, top, err := triage.ListParking(ctx, live, triage.DefaultParkingPatterns)
	if err != nil {
		t.Fatalf("ListParking: %v", err)
	}
	var found, want []string
	for _, pq := range pqs {
		found = append(found, pq.Name)
	}
	for _, p := range sc.Parking {
		want = append(want, p.Queue)
	}
	slices.Sort(found)
	slices.Sort(want)
	if !slices.Equal(found, want) {
		t.Fatalf("parking queues = %v, want exactly %v (not %v)", found, want, sc.NotParking)
	}

	for _, p := range sc.Parking {
		t.Run(p.Queue, func(t *testing.T) {
			i := slices.IndexFunc(pqs, func(pq triage.ParkingQueue) bool { return pq.Name == p.Queue })
			assertParkingQueue(t, pqs[i], p)

			opts := triage.BrowseOptions{}
			// 4.3: dlqt's requeue is free, so a limit asks nothing.
			cost := triage.DeliveryCostOf(pqs[i].Queue, top.Broker)
			if p.DeliveryLimit > 0 && cost.AsksFirst() {
				_, err := triage.Inspect(ctx, live, p.Queue, opts, redact.New())
				var cost *triage.DeliveryCostError
				if !errors.As(err, &cost) || cost.Limit != p.DeliveryLimit || cost.Depth != len(p.Messages) {
					t.Fatalf("browsing %s without consent: err = %v, want a DeliveryCostError (limit %d, depth %d)", p.Queue, err, p.DeliveryLimit, len(p.Messages))
				}
				opts.AcceptDeliveryCost = true
			}
			ins, err := triage.Inspect(ctx, live, p.Queue, opts, redact.New())
			if err != nil {
				t.Fatalf("Inspect %s: %v", p.Queue, err)
			}
			if p.DeliveryLimit > 0 && cost.RequeueCounts {
				// Never delivered since they were parked: the refused
				// browse did not touch them.
				for _, m := range ins.Messages {
					if m.DeliveryCount != 0 {
						t.Errorf("%s: delivery count %d after the refused browse, want 0", m.ID, m.DeliveryCount)
					}
				}
			} else if p.DeliveryLimit > 0 {
				// 4.3 carries a quorum dead letter's delivery count into the
				// parking queue, where it counts; a browse leaves it as it was.
				again, err := triage.Inspect(ctx, live, p.Queue, opts, redact.New())
				if err != nil || len(again.Messages) != len(ins.Messages) {
					t.Fatalf("second browse of %s: %d messages, %v", p.Queue, len(again.Messages), err)
				}
				for k, m := range again.Messages {
					if m.DeliveryCount != ins.Messages[k].DeliveryCount {
						t.Errorf("%s: delivery count %d after a free browse, was %d", m.ID, m.DeliveryCount, ins.Messages[k].DeliveryCount)
					}
				}
			}
			assertGroups(t, ins.Groups, p.Groups())
			assertTriagedAsProduced(t, ins, p)
			assertSafeToShow(t, ins, sc)
			assertDepth(t, conn, p.Queue, len(p.Messages))
		})
	}
	for q, n := range sc.Depths {
		assertDepth(t, conn, q, n) // no browse moved anything anywhere
	}
}

func assertParkingQueue(t *testing.T, pq triage.ParkingQueue, p demo.ParkingScenario) {
	t.Helper()
	if pq.Type != p.Type || pq.DeliveryLimit != p.DeliveryLimit {
		t.Errorf("%s: type %q delivery-limit %d, want %q %d", p.Queue, pq.Type, pq.DeliveryLimit, p.Type, p.DeliveryLimit)
	}
	from := slices.Sorted(slices.Values(pq.DeadLetteredFrom))
	if !slices.Equal(from, p.DeadLetteredFrom) {
		t.Errorf("%s: dead-lettered from %v, want %v", p.Queue, from, p.DeadLetteredFrom)
	}
	if byName := len(p.DeadLetteredFrom) == 0; pq.ByName != byName {
		t.Errorf("%s: ByName = %v, want %v", p.Queue, pq.ByName, byName)
	}
	if pq.Messages != len(p.Messages) {
		t.Errorf("%s: management says %d messages, produced %d", p.Queue, pq.Messages, len(p.Messages))
	}
}

func assertGroups(t *testing.T, got []triage.Group, want []demo.GroupCount) {
	t.Helper()
	var gs []demo.GroupCount
	for _, g := range got {
		gs = append(gs, demo.GroupCount{Reason: g.Reason, ReasonCode: g.ReasonCode, Count: g.Count})
	}
	slices.SortFunc(gs, func(a, b demo.GroupCount) int {
		if c := strings.Compare(string(a.Reason), string(b.Reason)); c != 0 {
			return c
		}
		return strings.Compare(a.ReasonCode, b.ReasonCode)
	})
	if !slices.Equal(gs, want) {
		t.Errorf("groups = %v, want %v", gs, want)
	}
}

// assertTriagedAsProduced checks each triaged message against what was
// produced with its message id: reason, code, event type, and a timeline
// that shows every x-death and the application's retry history.
func assertTriagedAsProduced(t *testing.T, ins triage.Inspection, p demo.ParkingScenario) {
	t.Helper()
	if len(ins.Messages) != len(p.Messages) {
		t.Fatalf("triaged %d messages, produced %d", len(ins.Messages), len(p.Messages))
	}
	ids := map[string]bool{}
	for _, m := range ins.Messages {
		if m.ID == "" || ids[m.ID] {
			t.Errorf("identity %q is empty or not unique", m.ID)
		}
		ids[m.ID] = true
		mid := m.Message.Properties.MessageID
		i := slices.IndexFunc(p.Messages, func(pr demo.Produced) bool { return pr.MessageID == mid })
		if i < 0 {
			t.Errorf("unexpected message %q", mid)
			continue
		}
		want := p.Messages[i]
		if mid != "" && m.ID != mid {
			t.Errorf("identity %q, want the message id %q", m.ID, mid)
		}
		if m.Reason != want.Reason || m.ReasonCode != want.ReasonCode || m.Envelope.EventType != want.EventType {
			t.Errorf("%s: %s/%q event %q, want %s/%q event %q", m.ID, m.Reason, m.ReasonCode, m.Envelope.EventType, want.Reason, want.ReasonCode, want.EventType)
		}
		for _, step := range recordedDeaths(want, ins.Topology.Broker.Version) {
			if !slices.ContainsFunc(m.Timeline, func(e triage.Event) bool {
				return e.Kind == triage.EventDeath && e.Queue == step.Queue && e.Reason == string(step.Reason) && !e.Time.IsZero()
			}) {
				t.Errorf("%s: timeline lacks the death %s/%s: %+v", m.ID, step.Queue, step.Reason, m.Timeline)
			}
		}
		if want.RetryCount > 0 {
			if !slices.ContainsFunc(m.Timeline, func(e triage.Event) bool {
				return e.Kind == triage.EventRetry && e.Count == int64(want.RetryCount)
			}) {
				t.Errorf("%s: timeline lacks x-retry-count %d: %+v", m.ID, want.RetryCount, m.Timeline)
			}
			if !slices.ContainsFunc(m.Timeline, func(e triage.Event) bool { return e.Kind == triage.EventFailure }) {
				t.Errorf("%s: timeline lacks the failure block: %+v", m.ID, m.Timeline)
			}
		}
	}
	anonymous := 0
	for _, pr := range p.Messages {
		if pr.MessageID == "" {
			anonymous++
		}
	}
	for id := range ids {
		if !slices.ContainsFunc(p.Messages, func(pr demo.Produced) bool { return pr.MessageID == id && id != "" }) {
			anonymous--
		}
	}
	if anonymous != 0 {
		t.Errorf("identities %v: the id-less messages did not each get a hash identity", slices.Sorted(maps.Keys(ids)))
	}
}

// assertSafeToShow checks that no secret survives in a payload and that no
// string dlqt derived carries a control character or bidi override.
func assertSafeToShow(t *testing.T, ins triage.Inspection, sc demo.Scenarios) {
	t.Helper()
	for _, m := range ins.Messages {
		planted := false
		for _, s := range sc.Secrets {
			if bytes.Contains(m.Message.Body, []byte(s)) {
				planted = true
			}
			if strings.Contains(m.Payload, s) {
				t.Errorf("%s: secret %q in the payload shown:\n%s", m.ID, s, m.Payload)
			}
		}
		if planted && m.Redactions == 0 {
			t.Errorf("%s: carries a secret yet reports no redaction", m.ID)
		}
		shown := m
		shown.Message = triage.Message{} // the raw message is never shown as is
		for _, s := range stringsIn(reflect.ValueOf(shown)) {
			if r, ok := unsafeRune(s); ok {
				t.Errorf("%s: %U reaches the screen in %q", m.ID, r, s)
			}
		}
	}
}

// unsafeRune finds a rune a terminal would act on: C0/C1 controls other than
// newline and tab, DEL, and bidi controls.
func unsafeRune(s string) (rune, bool) {
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return r, true
		}
	}
	return 0, false
}

// stringsIn collects every string reachable from v.
func stringsIn(v reflect.Value) []string {
	switch v.Kind() {
	case reflect.String:
		return []string{v.String()}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return stringsIn(v.Elem())
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			out = append(out, stringsIn(v.Field(i))...)
		}
		return out
	case reflect.Slice, reflect.Array:
		var out []string
		for i := range v.Len() {
			out = append(out, stringsIn(v.Index(i))...)
		}
		return out
	case reflect.Map:
		var out []string
		for _, k := range v.MapKeys() {
			out = append(out, stringsIn(k)...)
			out = append(out, stringsIn(v.MapIndex(k))...)
		}
		return out
	}
	return nil
}
