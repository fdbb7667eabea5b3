package triage

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// wantEvent is the part of an Event a test pins down; Detail is matched by substring.
type wantEvent struct {
	kind   EventKind
	time   string // RFC 3339, "" for undated
	queue  string
	reason string
	count  int64
	detail string
}

func checkTimeline(t *testing.T, got []Event, want []wantEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d:\n%s", len(got), len(want), dumpTimeline(got))
	}
	for i, w := range want {
		g := got[i]
		var wt time.Time
		if w.time != "" {
			wt = mustTime(w.time)
		}
		if g.Kind != w.kind || !g.Time.Equal(wt) || g.Queue != w.queue || g.Reason != w.reason || g.Count != w.count || !strings.Contains(g.Detail, w.detail) {
			t.Fatalf("event %d = %+v, want %+v\n%s", i, g, w, dumpTimeline(got))
		}
	}
}

func dumpTimeline(ev []Event) string {
	var b strings.Builder
	for _, e := range ev {
		b.WriteString(e.Time.Format(time.RFC3339) + " " + string(e.Kind) + " " + e.Queue + " " + e.Reason + " " + e.Detail + "\n")
	}
	return b.String()
}

func TestBuildTimeline(t *testing.T) {
	t.Run("seed 001 single reject", func(t *testing.T) {
		m := Message{Queue: "nghia-dia", Headers: Headers{
			"x-death":                []any{xdeath("viec", "rejected", 1, mustTime("2026-11-30T10:00:00Z"), "", "viec")},
			"x-first-death-queue":    "viec",
			"x-first-death-reason":   "rejected",
			"x-first-death-exchange": "",
		}}
		got := timelineOf(m, Envelope{}, ParseDeaths(m.Headers))
		checkTimeline(t, got, []wantEvent{
			{kind: EventDeath, time: "2026-11-30T10:00:00Z", queue: "viec", reason: "rejected", count: 1, detail: "exchange (default), routing keys [viec]"},
			{kind: EventFirstDeath, time: "2026-11-30T10:00:00Z", queue: "viec", reason: "rejected", detail: "exchange (default)"},
		})
	})

	t.Run("3.10: x-death[0] is most recent but not the latest by time", func(t *testing.T) {
		// The message was rejected in the work queue 5 times, the first time at
		// 10:00; between rejects it waited in a bucket, first at 10:01. On 3.10
		// the reject entry is [0] (latest death) yet has the earliest time.
		m := Message{Queue: "parking", Properties: Properties{Timestamp: mustTime("2026-11-30T09:59:00Z")}, Headers: Headers{
			"x-death": []any{
				xdeath("work", "rejected", 5, mustTime("2026-11-30T10:00:00Z"), "work.x", "jobs"),
				xdeath("work.wait", "expired", 4, mustTime("2026-11-30T10:01:00Z"), "retry.x", "jobs"),
			},
			"x-first-death-queue": "work", "x-first-death-reason": "rejected", "x-first-death-exchange": "work.x",
		}}
		got := timelineOf(m, Envelope{}, ParseDeaths(m.Headers))
		checkTimeline(t, got, []wantEvent{
			{kind: EventPublished, time: "2026-11-30T09:59:00Z", detail: "timestamp"},
			{kind: EventDeath, time: "2026-11-30T10:00:00Z", queue: "work", reason: "rejected", count: 5, detail: "first of 5"},
			{kind: EventFirstDeath, time: "2026-11-30T10:00:00Z", queue: "work", reason: "rejected", detail: "exchange work.x"},
			{kind: EventDeath, time: "2026-11-30T10:01:00Z", queue: "work.wait", reason: "expired", count: 4, detail: "routing keys [jobs]"},
		})
	})

	t.Run("3.10: reordered entries give the same timeline", func(t *testing.T) {
		a := xdeath("a", "expired", 1, mustTime("2026-11-30T10:03:00Z"), "", "a")
		b := xdeath("b", "rejected", 1, mustTime("2026-11-30T10:01:00Z"), "", "b")
		c := xdeath("c", "expired", 1, mustTime("2026-11-30T10:02:00Z"), "", "c")
		one := timelineOf(Message{}, Envelope{}, ParseDeaths(deathsHeader(a, b, c)))
		two := timelineOf(Message{}, Envelope{}, ParseDeaths(deathsHeader(a, c, b)))
		if dumpTimeline(one) != dumpTimeline(two) || one[0].Queue != "b" || one[2].Queue != "a" {
			t.Fatalf("order depends on entry order:\n%s\n%s", dumpTimeline(one), dumpTimeline(two))
		}
	})

	t.Run("4.x shape with last-death headers", func(t *testing.T) {
		m := Message{Headers: Headers{
			"x-death": []any{
				Headers{"queue": "qq", "reason": "delivery_limit", "count": int64(1), "time": mustTime("2026-11-30T11:00:00Z"), "exchange": "ex", "routing-keys": []any{"k"}},
				Headers{"queue": "work", "reason": "rejected", "count": int64(2), "time": mustTime("2026-11-30T10:00:00Z"), "exchange": "ex", "routing-keys": []any{"k"}},
			},
			"x-first-death-queue": "work", "x-first-death-reason": "rejected", "x-first-death-exchange": "ex",
			"x-last-death-queue": "qq", "x-last-death-reason": "delivery_limit", "x-last-death-exchange": "ex",
			"x-delivery-count": int64(3),
		}}
		got := timelineOf(m, Envelope{}, ParseDeaths(m.Headers))
		checkTimeline(t, got, []wantEvent{
			{kind: EventDeath, time: "2026-11-30T10:00:00Z", queue: "work", reason: "rejected", count: 2},
			{kind: EventFirstDeath, time: "2026-11-30T10:00:00Z", queue: "work", reason: "rejected"},
			{kind: EventDeath, time: "2026-11-30T11:00:00Z", queue: "qq", reason: "delivery_limit", count: 1},
			{kind: EventLastDeath, time: "2026-11-30T11:00:00Z", queue: "qq", reason: "delivery_limit", detail: "exchange ex"},
			{kind: EventDelivery, count: 3},
		})
	})

	t.Run("last death of a repeated entry is undated", func(t *testing.T) {
		m := Message{Headers: Headers{
			"x-death":            []any{xdeath("q", "rejected", 3, mustTime("2026-11-30T10:00:00Z"), "", "q")},
			"x-last-death-queue": "q", "x-last-death-reason": "rejected",
		}}
		got := timelineOf(m, Envelope{}, ParseDeaths(m.Headers))
		checkTimeline(t, got, []wantEvent{
			{kind: EventDeath, time: "2026-11-30T10:00:00Z", queue: "q", reason: "rejected", count: 3},
			{kind: EventLastDeath, queue: "q", reason: "rejected"},
		})
	})

	t.Run("seed 002 retries, envelope, replay", func(t *testing.T) {
		env := DecodeEnvelope([]byte(seed003Envelope))
		m := Message{Queue: "orders.dlq.q", Headers: Headers{
			"x-death": []any{
				xdeath("orders.retry.16s.q", "expired", 1, mustTime("2026-09-21T14:44:00Z"), "", "orders.retry.16s.q"),
				xdeath("orders.retry.2s.q", "expired", 1, mustTime("2026-09-21T14:40:07Z"), "", "orders.retry.2s.q"),
			},
			"x-retry-count":         int64(5),
			"x-last-error":          "Database connection timeout",
			"x-last-error-time":     "2026-09-21T14:44:10.000Z",
			"x-error":               "Max retry attempts exceeded",
			"x-failed-at":           "2026-09-21T14:44:32.123Z",
			"x-original-exchange":   "orders.exchange",
			"x-original-routingKey": "orders",
			"dlqt-replay-id":        "rp-1",
			"dlqt-replayed-at":      mustTime("2026-09-22T08:00:00Z").Unix(),
			"dlqt-attempts":         int64(6),
			"x-delivery-count":      "2",
		}}
		got := timelineOf(m, env, ParseDeaths(m.Headers))
		checkTimeline(t, got, []wantEvent{
			{kind: EventPublished, time: "2026-09-21T14:40:00Z", detail: "occurred_at"},
			{kind: EventFailure, time: "2026-09-21T14:40:05Z", detail: "first failure (envelope failure customer_tax_profile_missing, consumer invoice-worker release-2026-09-21)"},
			{kind: EventDeath, time: "2026-09-21T14:40:07Z", queue: "orders.retry.2s.q", reason: "expired", count: 1},
			{kind: EventDeath, time: "2026-09-21T14:44:00Z", queue: "orders.retry.16s.q", reason: "expired", count: 1},
			{kind: EventRetry, time: "2026-09-21T14:44:10Z", count: 5, detail: "application retry 5: Database connection timeout"},
			{kind: EventFailure, time: "2026-09-21T14:44:31Z", count: 4, detail: "attempt 4"},
			{kind: EventRetry, time: "2026-09-21T14:44:32.123Z", detail: "given up by the application: Max retry attempts exceeded"},
			{kind: EventReplay, time: "2026-09-22T08:00:00Z", count: 6, detail: "replay id rp-1"},
			{kind: EventRetry, detail: "republished from exchange orders.exchange, routing key orders"},
			{kind: EventDelivery, count: 2},
		})
	})

	t.Run("frameworks and unreadable times", func(t *testing.T) {
		env := Envelope{IsJSON: true, OccurredAt: "last tuesday", Failure: &Failure{Attempt: 2}}
		m := Message{Headers: Headers{
			"MT-Fault-ExceptionType":                  "System.TimeoutException",
			"MT-Fault-Message":                        "timed out",
			"MT-Fault-Timestamp":                      "2026-11-30T10:00:00Z",
			"NServiceBus.ExceptionInfo.ExceptionType": "Acme.ValidationException",
			"NServiceBus.TimeOfFailure":               "2026-11-30 09:00:00:123456 Z",
			"x-exception-message":                     "ignored without x-original-*",
		}}
		got := timelineOf(m, env, nil)
		checkTimeline(t, got, []wantEvent{
			{kind: EventFailure, time: "2026-11-30T09:00:00Z", detail: "NServiceBus fault Acme.ValidationException"},
			{kind: EventFailure, time: "2026-11-30T10:00:00Z", detail: "MassTransit fault System.TimeoutException: timed out"},
			{kind: EventPublished, detail: "envelope occurred_at last tuesday"},
			{kind: EventFailure, count: 2, detail: "last failure (envelope failure), attempt 2"},
		})
	})

	t.Run("hostile header text is sanitised and bounded", func(t *testing.T) {
		m := Message{Headers: Headers{
			"x-death":             []any{xdeath("q\x1b[2J", "rejected", 1, mustTime("2026-11-30T10:00:00Z"), "\u202eex", "k\x07")},
			"x-last-error":        strings.Repeat("\x1b[31m", 500),
			"x-first-death-queue": []byte("q\x9b"),
		}}
		got := timelineOf(m, Envelope{}, ParseDeaths(m.Headers))
		assertClean(t, "timeline", got)
		for _, e := range got {
			if len(e.Detail) > maxDetail+len("…") {
				t.Fatalf("detail of %d bytes", len(e.Detail))
			}
		}
	})

	t.Run("same second: publish first, replay last, the rest as found", func(t *testing.T) {
		sec := mustTime("2026-11-30T10:00:00Z")
		m := Message{Properties: Properties{Timestamp: sec}, Headers: Headers{
			"dlqt-replayed-at":  sec,
			"x-death":           []any{xdeath("q", "rejected", 1, sec, "", "q")},
			"x-last-error-time": sec,
		}}
		got := timelineOf(m, Envelope{}, ParseDeaths(m.Headers))
		checkTimeline(t, got, []wantEvent{
			{kind: EventPublished, time: "2026-11-30T10:00:00Z"},
			{kind: EventDeath, time: "2026-11-30T10:00:00Z", queue: "q", reason: "rejected", count: 1},
			{kind: EventRetry, time: "2026-11-30T10:00:00Z"},
			{kind: EventReplay, time: "2026-11-30T10:00:00Z"},
		})
	})

	t.Run("no evidence, no events", func(t *testing.T) {
		if got := timelineOf(Message{Headers: Headers{"content": "x"}}, Envelope{}, nil); len(got) != 0 {
			t.Fatalf("got %s", dumpTimeline(got))
		}
	})
}

// FuzzHeaders feeds header tables decoded from fuzzed JSON to every header
// reader: nothing may panic, every returned string must be terminal-safe, and
// a timeline must be sorted (undated last) and encodable as JSON.
func FuzzHeaders(f *testing.F) {
	for _, s := range []string{
		`{"x-death":[{"queue":"viec","reason":"rejected","count":1,"time":1764496800,"exchange":"","routing-keys":["viec"]}]}`,
		`{"x-death":[{"queue":"a","reason":"expired","count":"3","time":"2026-11-30T10:00:00Z"},{"queue":"b","reason":"maxlen","count":1e30,"time":1e300}]}`,
		`{"x-death":{"queue":"lone"},"x-first-death-queue":"q","x-first-death-reason":"rejected","x-last-death-queue":"q"}`,
		`{"x-death":[null,1,"x",[],{}],"x-retry-count":-5,"x-last-error-time":"9999-12-31T23:59:59Z","x-failed-at":-1e20}`,
		`{"x-reason-code":"\u001b]0;pwn\u0007","x-exception-stacktrace":"a.B: c\nCaused by: d.E: f","MT-Fault-Timestamp":1764496800000}`,
		`{"NServiceBus.TimeOfFailure":"2026-11-30 09:00:00:1 Z","dlqt-replayed-at":"1e99","x-delivery-count":"NaN"}`,
	} {
		f.Add([]byte(s), []byte(`{"failure":{"attempt":1,"last_failed_at":"2026-11-30T10:00:00Z"}}`))
	}
	f.Fuzz(func(t *testing.T, headerJSON, body []byte) {
		var raw map[string]any
		if json.Unmarshal(headerJSON, &raw) != nil {
			return
		}
		m := Message{Queue: "nghia-dia", Exchange: "dlx", Headers: toHeaders(raw), Body: body}
		env := DecodeEnvelope(body)
		deaths := ParseDeaths(m.Headers)
		assertClean(t, "deaths", deaths)
		for _, d := range deaths {
			if d.Count < 0 {
				t.Fatalf("negative count %d", d.Count)
			}
		}
		ev := timelineOf(m, env, deaths)
		assertClean(t, "timeline", ev)
		for i := 1; i < len(ev); i++ {
			a, b := ev[i-1].Time, ev[i].Time
			if (a.IsZero() && !b.IsZero()) || (!a.IsZero() && !b.IsZero() && b.Before(a)) {
				t.Fatalf("timeline out of order at %d:\n%s", i, dumpTimeline(ev))
			}
		}
		if _, err := json.Marshal(ev); err != nil {
			t.Fatalf("timeline does not encode: %v", err)
		}
		code := ReasonCodeOf(m, env)
		assertClean(t, "reason code", code)
		if len(code) > maxReasonCode+len("…") {
			t.Fatalf("code of %d bytes", len(code))
		}
		reason := ClassifyReason(m, deaths, seed001Topology())
		assertClean(t, "reason", string(reason))
		ids := Identify([]Message{m, m}, []Envelope{env, env})
		assertClean(t, "ids", ids)
		if ids[0] == ids[1] || ids[1] != ids[0]+"#2" {
			t.Fatalf("duplicate ids %q", ids)
		}
	})
}

// toHeaders turns decoded JSON into the Headers shape the broker package gives.
func toHeaders(m map[string]any) Headers {
	h := Headers{}
	for k, v := range m {
		h[k] = toHeaderValue(v)
	}
	return h
}

func toHeaderValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return toHeaders(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toHeaderValue(e)
		}
		return out
	}
	return v
}

// Seed 002 on 3.10: three retry buckets and the work queue die within one
// second, so every x-death time is equal; x-death[0] is the newest entry
// and 3.10 has reordered the rest (as seen on the broker: retry.3,
// retry.1, retry.2). The newest reads last, the rest in name order.
func TestTimelineOrdersSameSecondDeathsNewestLast(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 56, 24, 0, time.UTC)
	deaths := []Death{
		{Queue: "orders.main.q", Reason: ReasonRejected, Count: 1, Time: at},
		{Queue: "orders.retry.3.q", Reason: ReasonExpired, Count: 1, Time: at},
		{Queue: "orders.retry.1.q", Reason: ReasonExpired, Count: 1, Time: at},
		{Queue: "orders.retry.2.q", Reason: ReasonExpired, Count: 1, Time: at},
	}
	var got []string
	for _, e := range timelineOf(Message{}, Envelope{}, deaths) {
		if e.Kind == EventDeath {
			got = append(got, e.Queue)
		}
	}
	want := []string{"orders.retry.1.q", "orders.retry.2.q", "orders.retry.3.q", "orders.main.q"}
	if !slices.Equal(got, want) {
		t.Errorf("death order = %v, want %v", got, want)
	}
}
