package views

import (
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// The dry run says what an original route that is a retry bucket is and
// offers the work queue it feeds, instead of a bare "original route".
func TestDestinationStatusNamesARetryBucket(t *testing.T) {
	hop := &triage.RetryHop{Bucket: "orders.retry.1", Next: triage.Route{RoutingKey: "orders.q"}, Feeds: []string{"orders.q"}}
	for _, tt := range []struct {
		d    replay.Destination
		want string
	}{
		{replay.Destination{Original: true, Allowed: true, RetryBucket: hop},
			"retry bucket orders.retry.1 → orders.q (original route, allowed); to skip its wait, replay to :orders.q"},
		{replay.Destination{Allowed: true, FedBy: "orders.retry.1"},
			"the work queue retry bucket orders.retry.1 feeds (allowed: where the original route leads)"},
		{replay.Destination{Original: true, Allowed: true}, "original route (allowed)"},
		{replay.Destination{Original: true, Allowed: true, RetryBucket: &triage.RetryHop{Bucket: "b\x1b[2J", Feeds: []string{"w"}}},
			`retry bucket b\x1b[2J → w (original route, allowed); to skip its wait, replay to :`},
	} {
		if got := DestinationStatus(tt.d); got != tt.want {
			t.Errorf("DestinationStatus = %q, want %q", got, tt.want)
		}
	}
}
