package replay

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// A dry run into a bounded destination says so and how near its limit
// it is: a full drop-head queue pushes its oldest messages out, which no
// canary of the replayed ids can see.
func TestThePlanSaysWhenADestinationIsBounded(t *testing.T) {
	msgs := []triage.Message{parkedMsg("a", nil, `{}`), parkedMsg("b", nil, `{}`), parkedMsg("c", nil, `{}`)}
	in := replayInspection(msgs...)
	for i, q := range in.Topology.Queues {
		if q.Name == "orders" {
			in.Topology.Queues[i].MaxLength, in.Topology.Queues[i].Messages = 10, 9
		}
	}
	to := triage.Route{Exchange: "orders", RoutingKey: "order.created"}
	p, err := NewPlan(in, triage.Selection{IDs: []string{"a", "b", "c"}}, Options{To: &to, Allow: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Bounded) != 1 || p.Bounded[0].Name != "orders" || p.Bounded[0].Room != 1 || p.Bounded[0].Overflow != "drop-head" {
		t.Fatalf("bounded %+v", p.Bounded)
	}
	got := strings.Join(p.Warnings, "\n")
	for _, want := range []string{"orders is bounded (max-length 10, overflow drop-head)", "holds 9 messages", "room for 1 more", "replaying 3 goes past its limit", "pushed out"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
	if p.Runnable() != nil {
		t.Errorf("a bounded destination is a warning, not a problem: %v", p.Runnable())
	}
	bytesOnly := boundedWarnings([]BoundedQueue{{Name: "q", MaxLengthBytes: 1000, Bytes: 990, Overflow: "reject-publish", Room: -1}}, 1)
	if len(bytesOnly) != 1 || !strings.Contains(bytesOnly[0], "max-length-bytes 1000") || !strings.Contains(bytesOnly[0], "990 of 1000 bytes") {
		t.Errorf("bytes: %v", bytesOnly)
	}
}
