package triage

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

func TestAnalyze(t *testing.T) {
	t0 := mustTime("2026-11-30T10:00:00Z")

	t.Run("seed 001: broker deaths into a fanout parking queue", func(t *testing.T) {
		batch := Batch{Queue: "nghia-dia", Messages: []Message{
			{Queue: "nghia-dia", Exchange: "dlx", RoutingKey: "viec", Body: []byte("hello"),
				Headers: Headers{"x-death": []any{xdeath("viec", "rejected", 1, t0, "", "viec")},
					"x-first-death-queue": "viec", "x-first-death-reason": "rejected", "x-first-death-exchange": ""}},
			{Queue: "nghia-dia", Exchange: "dlx", RoutingKey: "viec2", Body: []byte("hello"),
				Headers: Headers{"x-death": []any{xdeath("viec2", "expired", 1, t0.Add(time.Minute), "", "viec2")}}},
			{Queue: "nghia-dia", Exchange: "dlx", RoutingKey: "viec3", Body: []byte("hello"),
				Headers: Headers{"x-death": []any{xdeath("viec3", "maxlen", 1, t0.Add(2*time.Minute), "", "viec3")}}},
			{Queue: "nghia-dia", Exchange: "dlx", RoutingKey: "viec-qq", Body: []byte{0, 1, 2, 0xff},
				Headers: Headers{"x-death": []any{xdeath("viec-qq", "delivery_limit", 1, t0, "", "viec-qq")}, "x-delivery-count": int64(4)}},
		}}
		got := Analyze(batch, seed001Topology(), nil)
		wantReasons := []Reason{ReasonRejected, ReasonExpired, ReasonMaxlen, ReasonDeliveryLimit}
		wantAttempts := []int{1, 1, 0, 4} // every death counts but an overflow (never delivered)
		for i, tr := range got {
			if tr.Reason != wantReasons[i] || tr.Attempts != wantAttempts[i] {
				t.Fatalf("message %d: reason %q attempts %d, want %q %d", i, tr.Reason, tr.Attempts, wantReasons[i], wantAttempts[i])
			}
			if len(tr.Deaths) != 1 || tr.PayloadBytes != len(batch.Messages[i].Body) || tr.ReasonCode != "" {
				t.Fatalf("message %d: %+v", i, tr)
			}
		}
		// Same body, no ids, different x-death: the same content, told apart by occurrence.
		if id := got[0].ID; !strings.HasPrefix(id, "sha256:") || got[1].ID != id+"#2" || got[2].ID != id+"#3" || strings.HasPrefix(got[3].ID, id) {
			t.Fatalf("ids %q %q %q %q", got[0].ID, got[1].ID, got[2].ID, got[3].ID)
		}
		if !got[0].DiedAt.Equal(t0) || !got[2].DiedAt.Equal(t0.Add(2*time.Minute)) {
			t.Fatalf("died at %v %v", got[0].DiedAt, got[2].DiedAt)
		}
		if got[0].Payload != "hello" || got[0].Binary || !got[3].Binary || got[3].DeliveryCount != 4 {
			t.Fatalf("payloads: %+v / %+v", got[0], got[3])
		}
		if len(got[0].Timeline) != 2 || got[0].Timeline[0].Kind != EventDeath || got[0].Timeline[1].Kind != EventFirstDeath {
			t.Fatalf("timeline %s", dumpTimeline(got[0].Timeline))
		}
		groups := GroupMessages(got)
		if len(groups) != 4 {
			t.Fatalf("groups %+v", groups)
		}
	})

	t.Run("seed 002: retried by the app, then published to the DLQ", func(t *testing.T) {
		body := `{"message_id":"msg_1","event_type":"order.created","failure":{"reason_code":"db_timeout","attempt":3,"last_failed_at":"2026-11-30T10:00:31Z"},"password":"hunter2"}`
		m := Message{Queue: "orders.dlq.q", Exchange: "orders.dlx.exchange", RoutingKey: "orders.dlq", Body: []byte(body),
			Properties: Properties{ContentType: "application/json"},
			Headers: Headers{
				"x-death": []any{
					xdeath("orders.retry.16s.q", "expired", 1, t0.Add(20*time.Second), "", "orders.retry.16s.q"),
					xdeath("orders.retry.2s.q", "expired", 1, t0.Add(2*time.Second), "", "orders.retry.2s.q"),
				},
				"x-retry-count":     int64(5),
				"x-last-error-time": "2026-11-30T10:00:25Z",
				"x-failed-at":       "2026-11-30T10:00:40Z",
				"x-error":           "Max retry attempts exceeded",
			}}
		got := Analyze(Batch{Queue: "orders.dlq.q", Messages: []Message{m}}, seed002Topology(), redact.New())[0]
		if got.Reason != ReasonPublished || got.ReasonCode != "db_timeout" || got.ID != "msg_1" || got.Envelope.EventType != "order.created" {
			t.Fatalf("got %+v", got)
		}
		if got.Attempts != 5 { // x-retry-count beats failure.attempt 3 and the two deaths
			t.Fatalf("attempts %d", got.Attempts)
		}
		if !got.DiedAt.Equal(t0.Add(40 * time.Second)) { // x-failed-at is the latest evidence
			t.Fatalf("died at %v", got.DiedAt)
		}
		if strings.Contains(got.Payload, "hunter2") || got.Redactions == 0 {
			t.Fatalf("secret shown: %q (%d redactions)", got.Payload, got.Redactions)
		}
		if got.Message.Queue != "orders.dlq.q" || string(got.Message.Body) != body {
			t.Fatal("the raw message was not kept untouched")
		}
	})

	t.Run("attempts: repeated rejects, replays and delivery counts", func(t *testing.T) {
		ms := []Message{
			{Queue: "nghia-dia", Headers: Headers{"x-death": []any{
				xdeath("viec", "rejected", 3, t0, "", "viec"), xdeath("viec-qq", "delivery_limit", 2, t0, "", "viec"),
				xdeath("viec2", "expired", 9, t0, "", "viec"),
			}}},
			{Queue: "nghia-dia", Headers: Headers{"dlqt-attempts": int64(7), "x-death": []any{xdeath("viec", "rejected", 1, t0, "", "viec")}}},
			{Queue: "nghia-dia", Body: []byte(`{"failure":{"attempt":"12"}}`), Headers: Headers{"MT-Fault-Timestamp": "2026-11-30T11:00:00Z"}},
			{Queue: "nghia-dia", Headers: Headers{"x-death": []any{Headers{"queue": "viec", "reason": "rejected", "count": float64(1e300)}, Headers{"queue": "viec", "reason": "rejected", "count": float64(1e300)}}}},
		}
		top := seed001Topology()
		top.Queues = append(top.Queues, Queue{Name: "parking.qq", Type: QueueQuorum})
		ms = append(ms,
			Message{Queue: "nghia-dia", Headers: Headers{"x-delivery-count": int64(3)}},  // carried from a quorum work queue
			Message{Queue: "parking.qq", Headers: Headers{"x-delivery-count": int64(3)}}, // returns to this parking queue
		)
		got := Analyze(Batch{Messages: ms}, top, nil)
		if !got[2].DiedAt.Equal(mustTime("2026-11-30T11:00:00Z")) {
			t.Fatalf("a MassTransit fault time is a death time: %v", got[2].DiedAt)
		}
		if got[5].DeliveryCount != 3 {
			t.Fatalf("delivery count %d", got[5].DeliveryCount)
		}
		for i, want := range []int{14, 7, 12, int(^uint(0) >> 1), 3, 0} { // 3 rejects + 2 delivery limits + 9 expiries
			if got[i].Attempts != want {
				t.Fatalf("message %d: attempts %d, want %d", i, got[i].Attempts, want)
			}
		}
	})

	t.Run("hostile names never leave unsanitised", func(t *testing.T) {
		evil := "q\x1b]0;owned\x07\u202e"
		m := Message{Queue: evil, Exchange: "dlx", RoutingKey: evil, Properties: Properties{MessageID: "id\x1b[2J"},
			Body: []byte(`{"event_type":"e\u001b[31m","failure":{"reason_code":"c\u009b1m"}}`),
			Headers: Headers{"x-death": []any{xdeath(evil, "rejected\x1b", 1, t0, evil, evil)},
				"x-first-death-queue": evil, "x-last-error": evil, "x-retry-count": int64(1)}}
		top := Topology{
			Exchanges: []Exchange{{Name: "dlx", Type: "fanout"}},
			Queues:    []Queue{{Name: evil, DeadLetterExchange: "dlx", HasDeadLetterExchange: true}},
			Bindings:  []Binding{{Source: "dlx", Destination: evil, DestinationType: "queue"}},
		}
		got := Analyze(Batch{Messages: []Message{m}}, top, nil)
		shown := got[0]
		shown.Payload = strings.ReplaceAll(shown.Payload, "\n", "") // a payload keeps its lines
		assertClean(t, "triaged", shown)
		// The raw name still matched the topology: a broker death, with its reason sanitised.
		if got[0].Reason != `rejected\x1b` {
			t.Fatalf("reason %q", got[0].Reason)
		}
		if _, err := json.Marshal(got); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("same queue browsed twice gives the same ids", func(t *testing.T) {
		batch := syntheticBatch(200)
		a, b := Analyze(batch, seed002Topology(), nil), Analyze(batch, seed002Topology(), nil)
		seen := map[string]bool{}
		for i := range a {
			if a[i].ID != b[i].ID {
				t.Fatalf("message %d: %s then %s", i, a[i].ID, b[i].ID)
			}
			if seen[a[i].ID] {
				t.Fatalf("id %s twice", a[i].ID)
			}
			seen[a[i].ID] = true
		}
	})
}

// syntheticBatch mixes the shapes a real parking queue holds: envelopes with
// and without ids, app-retried messages (seed 002), broker deaths and
// duplicates.
func syntheticBatch(n int) Batch {
	t0 := mustTime("2026-11-30T10:00:00Z")
	ms := make([]Message, n)
	for i := range ms {
		when := t0.Add(time.Duration(i) * time.Second)
		h := Headers{
			"x-death": []any{
				xdeath("orders.retry.16s.q", "expired", 1, when, "", "orders.retry.16s.q"),
				xdeath("orders.retry.2s.q", "expired", 1, when.Add(-20*time.Second), "", "orders.retry.2s.q"),
			},
			"x-first-death-queue": "orders.retry.2s.q", "x-first-death-reason": "expired", "x-first-death-exchange": "",
			"x-retry-count": int64(i % 6), "x-last-error": "Database connection timeout",
			"x-last-error-time": when.Format(time.RFC3339), "x-failed-at": when.Add(time.Second).Format(time.RFC3339),
		}
		var body string
		switch i % 4 {
		case 0:
			body = fmt.Sprintf(`{"message_id":"msg_%d","event_type":"order.created","schema_version":3,"occurred_at":%q,"failure":{"reason_code":"db_timeout","attempt":%d}}`, i, when.Format(time.RFC3339), i%5)
		case 1:
			body = fmt.Sprintf(`{"orderId":"o-%d","customer":{"email":"user%d@example.com","card":"4111111111111111"}}`, i, i)
		case 2:
			body = fmt.Sprintf("plain text failure for order %d with token=abc%d", i, i)
			h["x-death"] = []any{xdeath("orders.main.q", "rejected", int64(i%3+1), when, "orders.exchange", "orders.dlq")}
		case 3:
			body = `{"orderId":"dup"}` // identical duplicates
			h = Headers{"x-reason-code": "duplicate"}
		}
		ms[i] = Message{Queue: "orders.dlq.q", Position: i, Exchange: "orders.dlx.exchange", RoutingKey: "orders.dlq",
			Properties: Properties{ContentType: "application/json"}, Headers: h, Body: []byte(body)}
	}
	return Batch{Queue: "orders.dlq.q", Depth: n, Limit: n, Messages: ms}
}

func BenchmarkAnalyze(b *testing.B) {
	batch := syntheticBatch(10000)
	top := seed002Topology()
	red := redact.New()
	b.ReportAllocs()
	for b.Loop() {
		ts := Analyze(batch, top, red)
		if len(GroupMessages(ts)) == 0 {
			b.Fatal("no groups")
		}
	}
}

func TestPublishedMessageWithOnlyATimestampDiedWhenPublished(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 58, 12, 0, time.UTC)
	b := Batch{Queue: "legacy.events.failed", Messages: []Message{
		{Queue: "legacy.events.failed", Properties: Properties{MessageID: "leg-1", Timestamp: at}, Body: []byte("plain text")},
		{Queue: "legacy.events.failed", Properties: Properties{MessageID: "leg-2"}, Body: []byte("no time at all")},
	}}
	ts := Analyze(b, Topology{Queues: []Queue{{Name: "legacy.events.failed"}}}, nil)
	if ts[0].Reason != ReasonPublished || !ts[0].DiedAt.Equal(at) {
		t.Errorf("leg-1: reason %s died %v, want published at %v", ts[0].Reason, ts[0].DiedAt, at)
	}
	if !ts[1].DiedAt.IsZero() {
		t.Errorf("leg-2 has no time evidence, yet died at %v", ts[1].DiedAt)
	}
}
