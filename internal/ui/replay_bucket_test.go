package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// The start dialog says what a retry bucket route is, not only its name.
func TestStartConfirmNamesTheRetryBucket(t *testing.T) {
	m := newModel(Options{})
	d := &startConfirm{replay: &replayScreen{c: m.c}, plan: replay.Plan{Queue: "orders.dlq", Items: replay.ItemsOf(replay.Item{ID: "o-1"}),
		Destinations: []replay.Destination{{Route: triage.Route{RoutingKey: "orders.retry.1"}, Original: true, Allowed: true,
			RetryBucket: &triage.RetryHop{Bucket: "orders.retry.1", Next: triage.Route{RoutingKey: "orders.q"}, Feeds: []string{"orders.q"}}}}}}
	if got := ansi.Strip(d.View(100)); !strings.Contains(got, ":orders.retry.1, retry bucket orders.retry.1 → orders.q") {
		t.Errorf("no retry bucket in:\n%s", got)
	}
}

// The dry run's rate field takes a finite number above zero: "NaN" parses
// as a float and passed its "<= 0" check.
func TestTheRateFieldRefusesWhatCannotPace(t *testing.T) {
	for _, v := range []string{"0", "-3", "NaN", "Inf", "abc"} {
		o := replay.Options{Rate: 10}
		if err := applyField(&o, fieldRate, v); err == nil || o.Rate != 10 {
			t.Errorf("rate %q: err %v, rate now %g; want refused, 10 kept", v, err, o.Rate)
		}
	}
	o := replay.Options{Rate: 10}
	if err := applyField(&o, fieldRate, "50"); err != nil || o.Rate != 50 {
		t.Errorf("rate 50: err %v, rate %g", err, o.Rate)
	}
}
