package replay

import (
	"slices"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// bucketInspection: orders.retry.1 holds a message for 5 s and dead-letters
// it to orders.q, which dead-letters its failures into orders.dlq. The
// message's first death was the wait in the bucket.
func bucketInspection() triage.Inspection {
	when := mustTime("2026-01-02T03:04:05Z")
	top := triage.Topology{
		Vhost: "v",
		Queues: []triage.Queue{
			{Name: "orders.q", HasDeadLetterExchange: true, HasDeadLetterRoutingKey: true, DeadLetterRoutingKey: "orders.dlq"},
			{Name: "orders.dlq"},
			{Name: "orders.retry.1", MessageTTL: 5000, HasDeadLetterExchange: true, HasDeadLetterRoutingKey: true, DeadLetterRoutingKey: "orders.q"},
		},
		Exchanges: []triage.Exchange{{Name: "", Type: "direct"}},
	}
	m := triage.Message{Queue: "orders.dlq", RoutingKey: "orders.dlq", Properties: triage.Properties{MessageID: "o-1"}, Headers: triage.Headers{
		"x-death": deathList(
			xdeath("orders.q", "rejected", 1, when, "", "orders.q"),
			xdeath("orders.retry.1", "expired", 1, when, "", "orders.retry.1"),
		),
		"x-first-death-queue": "orders.retry.1", "x-first-death-reason": "expired", "x-first-death-exchange": "",
	}, Body: []byte(`{}`)}
	b := triage.Batch{Vhost: "v", Queue: "orders.dlq", Messages: []triage.Message{m}}
	ts := triage.Analyze(b, top, nil)
	return triage.Inspection{Batch: b, Topology: top, Messages: ts, Groups: triage.GroupMessages(ts)}
}

// Issue 20, item 6: the original route of a retry-bucket chain is the
// bucket; the plan says so and offers the work queue it feeds, which may be
// chosen without a replay.allow pattern (it is where the bucket sends).
func TestPlanNamesTheRetryBucketAndOffersItsWorkQueue(t *testing.T) {
	in := bucketInspection()
	p, err := NewPlan(in, triage.Selection{IDs: []string{"o-1"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Destinations) != 1 {
		t.Fatalf("destinations = %+v", p.Destinations)
	}
	d := p.Destinations[0]
	if d.Route != (triage.Route{RoutingKey: "orders.retry.1"}) || !d.Original {
		t.Fatalf("destination = %+v, want the original route :orders.retry.1", d)
	}
	hop := d.RetryBucket
	if hop == nil || hop.Bucket != "orders.retry.1" || hop.Next != (triage.Route{RoutingKey: "orders.q"}) || !slices.Equal(hop.Feeds, []string{"orders.q"}) {
		t.Fatalf("retry bucket = %+v, want orders.retry.1 -> :orders.q (orders.q)", hop)
	}

	to := hop.Next
	p, err = NewPlan(in, triage.Selection{IDs: []string{"o-1"}}, Options{To: &to})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Destinations[0]; !d.Allowed || d.FedBy != "orders.retry.1" || len(p.Problems) != 0 || !slices.Equal(d.Queues, []string{"orders.q"}) {
		t.Errorf("to the work queue: %+v, problems %v; want allowed, fed by orders.retry.1", d, p.Problems)
	}
	other := triage.Route{RoutingKey: "orders.other"}
	p, _ = NewPlan(in, triage.Selection{IDs: []string{"o-1"}}, Options{To: &other})
	if p.Destinations[0].Allowed || p.Destinations[0].FedBy != "" {
		t.Errorf("any other --to stays under replay.allow: %+v", p.Destinations[0])
	}
}
