package replay

import (
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// A routing key is not a path: '*' and '?' match '/' too, everything else
// reads as path.Match does.
func TestAllowedGlobs(t *testing.T) {
	for _, c := range []struct {
		pattern, route string
		want           bool
	}{
		{"orders:*", "orders:eu/order.created", true}, // path.Match stopped at '/'
		{"orders:*", "orders:order.created", true},
		{"orders:*", "orders:", true},
		{"orders:*", "ordersx:k", false},
		{"*", "any.exchange:a/b/c", true},
		{"*:order.created", ":order.created", true}, // the default exchange
		{"billing.*:*", "billing.eu:invoice/paid", true},
		{"billing:*", "orders:x", false},
		{"ledger:entry.*", "ledger:entry.posted", true},
		{"ledger:entry.*", "ledger:entries", false},
		{"ledger:entry.?osted", "ledger:entry.posted", true},
		{"ledger:a?b", "ledger:a/b", true},
		{"ledger:a?b", "ledger:ab", false},
		{"orders:[a-c]*", "orders:b/x", true},
		{"orders:[a-c]*", "orders:d", false},
		{"orders:[^a-c]*", "orders:d", true},
		{"orders:[^a-c]*", "orders:a", false},
		{`orders:\*`, "orders:*", true},
		{`orders:\*`, "orders:x", false},
		{"orders:a+b", "orders:a+b", true}, // no regexp syntax leaks through
		{"orders:a+b", "orders:aab", false},
		{"orders:(x|y)", "orders:x", false},
		{"orders:ü*", "orders:über/ü", true},
		{"orders:line*", "orders:line\nbreak", true},
	} {
		got, err := Allowed(mustRoute(t, c.route), []string{c.pattern})
		if err != nil || got != c.want {
			t.Errorf("%q over %q: %v, %v; want %v", c.pattern, c.route, got, err, c.want)
		}
	}
}

func TestAllowedRefusesBadPatterns(t *testing.T) {
	for _, p := range []string{"[", "orders:[a-", "orders:[]", "orders:[z-a]", `orders:\`, "orders:[^]"} {
		if _, err := Allowed(triage.Route{Exchange: "orders", RoutingKey: "k"}, []string{"orders:k", p}); err == nil {
			t.Errorf("bad pattern %q was accepted", p)
		}
	}
}

func mustRoute(t *testing.T, s string) triage.Route {
	t.Helper()
	r, err := triage.ParseRoute(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
