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
