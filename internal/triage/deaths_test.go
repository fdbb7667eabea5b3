package triage

import (
	"reflect"
	"testing"
	"time"
)

// namedTable stands in for amqp091-go's Table, which triage cannot import.
type namedTable map[string]any

func TestParseDeaths(t *testing.T) {
	t1 := mustTime("2026-11-30T10:00:00Z")
	t2 := mustTime("2026-11-30T10:05:00Z")
	tests := []struct {
		name string
		h    Headers
		want []Death
	}{
		{"no header", Headers{"other": "x"}, nil},
		{"nil headers", nil, nil},
		{"seed 001 rejected", deathsHeader(xdeath("viec", "rejected", 1, t1, "", "viec")),
			[]Death{{Queue: "viec", Reason: ReasonRejected, Count: 1, Time: t1, Exchange: "", RoutingKeys: []string{"viec"}}}},
		{"seed 001 expired and maxlen", deathsHeader(xdeath("viec2", "expired", 1, t1, "", "viec2"), xdeath("viec3", "maxlen", 1, t2, "", "viec3")),
			[]Death{
				{Queue: "viec2", Reason: ReasonExpired, Count: 1, Time: t1, RoutingKeys: []string{"viec2"}},
				{Queue: "viec3", Reason: ReasonMaxlen, Count: 1, Time: t2, RoutingKeys: []string{"viec3"}},
			}},
		{"header order kept (3.10: only [0] is the latest)", deathsHeader(
			xdeath("orders.main.q", "rejected", 5, t1, "orders.exchange", "orders"),
			xdeath("orders.retry.2s.q", "expired", 4, t2, "", "orders.retry.2s.q")),
			[]Death{
				{Queue: "orders.main.q", Reason: ReasonRejected, Count: 5, Time: t1, Exchange: "orders.exchange", RoutingKeys: []string{"orders"}},
				{Queue: "orders.retry.2s.q", Reason: ReasonExpired, Count: 4, Time: t2, RoutingKeys: []string{"orders.retry.2s.q"}},
			}},
		{"other value shapes", Headers{"x-death": []any{map[string]any{
			"queue": []byte("q1"), "reason": []byte("delivery_limit"), "count": int32(3),
			"time": float64(t1.Unix()), "exchange": []byte("ex"), "routing-keys": []any{[]byte("k1"), "k2", nil, 7},
			"original-expiration": "5000",
		}}},
			[]Death{{Queue: "q1", Reason: ReasonDeliveryLimit, Count: 3, Time: t1, Exchange: "ex", RoutingKeys: []string{"k1", "k2", "7"}, OriginalExpiration: "5000"}}},
		{"count as float, string, uint; time as int64, RFC 3339, millis", Headers{"x-death": []any{
			Headers{"queue": "a", "reason": "expired", "count": 2.0, "time": t1.Unix()},
			Headers{"queue": "b", "reason": "expired", "count": "3", "time": "2026-11-30T10:05:00Z"},
			Headers{"queue": "c", "reason": "expired", "count": uint64(4), "time": t2.UnixMilli()},
		}},
			[]Death{
				{Queue: "a", Reason: ReasonExpired, Count: 2, Time: t1},
				{Queue: "b", Reason: ReasonExpired, Count: 3, Time: t2},
				{Queue: "c", Reason: ReasonExpired, Count: 4, Time: t2},
			}},
		{"garbage entries skipped", Headers{"x-death": []any{
			"junk", nil, int64(3), Headers{}, Headers{"count": int64(2)}, []any{"nested"},
			Headers{"queue": "kept", "reason": "rejected", "count": int64(-4), "time": "yesterday", "routing-keys": "single"},
		}},
			[]Death{{Queue: "kept", Reason: ReasonRejected, RoutingKeys: []string{"single"}}}},
		{"unknown reason kept", deathsHeader(Headers{"queue": "q", "reason": "x-new-reason"}),
			[]Death{{Queue: "q", Reason: "x-new-reason"}}},
		{"not a list", Headers{"x-death": "rejected"}, nil},
		{"lone table", Headers{"x-death": Headers{"queue": "q", "reason": "maxlen", "count": int64(1)}},
			[]Death{{Queue: "q", Reason: ReasonMaxlen, Count: 1}}},
		{"a named table type (amqp091-go's Table)", Headers{"x-death": []any{namedTable{"queue": "q", "reason": "expired", "count": int64(2)}}},
			[]Death{{Queue: "q", Reason: ReasonExpired, Count: 2}}},
		{"[]Headers from a caller", Headers{"x-death": []Headers{{"queue": "q", "reason": "rejected"}}},
			[]Death{{Queue: "q", Reason: ReasonRejected}}},
		{"time out of range is no time", deathsHeader(Headers{"queue": "q", "reason": "rejected", "time": time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)}),
			[]Death{{Queue: "q", Reason: ReasonRejected}}},
		{"control characters sanitised", deathsHeader(xdeath("evil\x1b[2J", "rejected\u202e", 1, t1, "e\rx", "k\nk")),
			[]Death{{Queue: `evil\x1b[2J`, Reason: `rejected\u202e`, Count: 1, Time: t1, Exchange: `e\rx`, RoutingKeys: []string{`k\nk`}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseDeaths(tc.h)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseDeaths =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}
