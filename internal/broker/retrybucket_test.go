package broker_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// Issue 20, item 6: a message waited in the retry bucket orders.retry.1,
// which dead-letters into orders.q, then failed there into orders.dlq. Its
// original route is the bucket: the plan says so and offers orders.q, and
// a replay to orders.q is allowed with no replay.allow and lands there
// without the bucket's wait.
func TestReplayPlanNamesTheRetryBucketAndSendsToItsWorkQueue(t *testing.T) {
	f := newFixture(t, "retry-bucket")
	f.declare("orders.dlq", nil)
	f.declare("orders.q", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	f.declare("orders.retry.1", amqp.Table{"x-message-ttl": int32(50), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.q"})
	f.publishOne("", "orders.retry.1", amqp.Publishing{MessageId: "o-1", ContentType: "application/json", Body: []byte(`{"order":1}`)})
	f.waitDepth("orders.q", 1)
	f.rejectAll("orders.q")
	f.waitDepth("orders.dlq", 1)

	ctx := context.Background()
	live := f.live()
	in, err := triage.Inspect(ctx, live, "orders.dlq", triage.BrowseOptions{}, redact.New())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := replay.NewPlan(in, triage.Selection{IDs: []string{"o-1"}}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := plan.Destinations[0]
	if d.Route != (triage.Route{RoutingKey: "orders.retry.1"}) || d.RetryBucket == nil || d.RetryBucket.String() != "retry bucket orders.retry.1 → orders.q" {
		t.Fatalf("destination %+v, retry bucket %+v; want :orders.retry.1 as retry bucket orders.retry.1 → orders.q", d, d.RetryBucket)
	}

	to := d.RetryBucket.Next
	plan, err = replay.NewPlan(in, triage.Selection{IDs: []string{"o-1"}}, replay.Options{To: &to, Rate: 50, Canary: 1, CanaryRate: 50, Observe: 100 * time.Millisecond, AutoRamp: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Runnable(); err != nil || !slices.Equal(plan.DestinationQueues, []string{"orders.q"}) {
		t.Fatalf("to the work queue: %v, reaches %v", err, plan.DestinationQueues)
	}
	f.ch.QueueDelete("orders.q", false, false, false) // keep the copy where it lands: no DLX back to orders.dlq
	f.declare("orders.q", nil)
	port, err := live.OpenReplay(ctx, plan.ID, "orders.dlq")
	if err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	res, err := replay.Run(ctx, plan, port, journal.NewRecorder(j, "test", "host"), nil, nil)
	port.Close()
	if err != nil || res.Resolved != 1 {
		t.Fatalf("replay: %+v, %v", res, err)
	}
	f.waitDepth("orders.q", 1)
	if got := ids(f.drain("orders.q")); !slices.Equal(got, []string{"o-1"}) {
		t.Errorf("orders.q got %v", got)
	}
	f.waitDepth("orders.dlq", 0)
}
