package broker_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// replayInto parks n messages an application published into "parked" (no
// x-death; x-original-* name the route), plans a replay of ids to their
// original route and runs it headless with a short canary.
func replayInto(t *testing.T, f *fixture, ids []string, opts replay.Options) (replay.Result, *journal.Journal) {
	t.Helper()
	ctx := context.Background()
	live := f.live()
	in, err := triage.Inspect(ctx, live, "parked", triage.BrowseOptions{}, redact.New())
	if err != nil {
		t.Fatal(err)
	}
	opts.AutoRamp = true
	plan, err := replay.NewPlan(in, triage.Selection{IDs: ids}, opts)
	if err != nil {
		t.Fatal(err)
	}
	port, err := live.OpenReplay(ctx, plan.ID, "parked")
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	j, err := journal.Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	res, err := replay.Run(ctx, plan, port, journal.NewRecorder(j, "test", "host"), nil, nil)
	if err != nil {
		t.Fatalf("RunReplay: %v", err)
	}
	return res, j
}

func parkPublished(t *testing.T, f *fixture, exchange, key string, n int) []string {
	t.Helper()
	f.declare("parked", nil)
	ids := make([]string, n)
	for i := range n {
		p := testMessage(i, []byte(`{"n":1}`))
		p.Headers["x-original-exchange"] = exchange
		p.Headers["x-original-routingKey"] = key
		f.publishOne("", "parked", p)
		ids[i] = p.MessageId
	}
	return ids
}

func ids(ds []amqp.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.MessageId)
	}
	return out
}

// drain takes every message of queue (acked) in order.
func (f *fixture) drain(queue string) []amqp.Delivery {
	f.t.Helper()
	var out []amqp.Delivery
	for {
		d, ok, err := f.ch.Get(queue, true)
		if err != nil {
			f.t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, d)
	}
}

func TestReplayTakesOnlyTheSelectedAndKeepsTheRestInOrder(t *testing.T) {
	f := newFixture(t, "replay-some")
	if err := f.ch.ExchangeDeclare("ledger", "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	f.declare("ledger.entries", nil)
	if err := f.ch.QueueBind("ledger.entries", "entry.posted", "ledger", false, nil); err != nil {
		t.Fatal(err)
	}
	all := parkPublished(t, f, "ledger", "entry.posted", 10)
	pick := []string{all[1], all[4], all[8]}

	res, j := replayInto(t, f, pick, replay.Options{Rate: 100, Canary: 1, CanaryRate: 50, Observe: 100 * time.Millisecond})
	if res.Resolved != 3 || res.StoppedBecause != "" {
		t.Fatalf("result %+v", res)
	}
	f.waitDepth("ledger.entries", 3)
	dest := f.drain("ledger.entries")
	if !slices.Equal(ids(dest), pick) {
		t.Errorf("destination got %v, want %v", ids(dest), pick)
	}
	if id, _ := dest[0].Headers["dlqt-replay-id"].(string); id != res.ID {
		t.Errorf("dlqt-replay-id %q, want %q", id, res.ID)
	}
	rest := slices.DeleteFunc(slices.Clone(all), func(id string) bool { return slices.Contains(pick, id) })
	if got := ids(f.drain("parked")); !slices.Equal(got, rest) {
		t.Errorf("parking queue kept %v, want %v in order", got, rest)
	}
	if err := j.Verify(); err != nil {
		t.Error(err)
	}
}

func TestReplayReturnedByTheBrokerStopsAndKeepsTheSource(t *testing.T) {
	f := newFixture(t, "replay-return")
	// An exchange with no binding: a mandatory publish comes back.
	if err := f.ch.ExchangeDeclare("void", "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	all := parkPublished(t, f, "void", "nothing", 6)

	// The canary paced at 5 msg/s: the first return is in before the
	// second publish (at 50 msg/s a 4.0.5 node under CI load returned the
	// first after the second was out, and both came back).
	res, j := replayInto(t, f, all, replay.Options{Rate: 100, Canary: 2, CanaryRate: 5, Observe: time.Second})
	if !strings.Contains(res.StoppedBecause, "did not take 1") || !strings.Contains(res.StoppedBecause, "NO_ROUTE") {
		t.Errorf("stopped because %q", res.StoppedBecause)
	}
	if res.Returned != 1 || res.Untouched != 5 || res.Resolved != 0 {
		t.Errorf("result %+v", res)
	}
	if got := ids(f.drain("parked")); !slices.Equal(got, all) {
		t.Errorf("parking queue holds %v, want all of %v in order", got, all)
	}
	st, err := replay.Find(j, res.ID)
	if err != nil || st.Interrupted() || st.Counts()[replay.OutcomeReturned] != 1 {
		t.Errorf("journal state %+v, %v", st, err)
	}
}

func TestQueueWithEmptyMessageStatsList(t *testing.T) {
	q, err := broker.DecodeQueue(`{"name":"p","type":"classic","messages":3,"message_stats":[]}`)
	if err != nil || q.Name != "p" || q.Messages != 3 || q.PublishRate != 0 {
		t.Errorf("decoded %+v, %v", q, err)
	}
	q, err = broker.DecodeQueue(`{"name":"p","message_stats":{"publish_details":{"rate":2.5}}}`)
	if err != nil || q.PublishRate != 2.5 {
		t.Errorf("decoded %+v, %v", q, err)
	}
}

func TestReplayNackedByAFullDestinationStopsAndKeepsTheSource(t *testing.T) {
	f := newFixture(t, "replay-nack")
	if err := f.ch.ExchangeDeclare("ledger", "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	// Full after one message: the broker nacks every publish beyond it.
	f.declare("ledger.entries", amqp.Table{"x-max-length": int32(1), "x-overflow": "reject-publish"})
	if err := f.ch.QueueBind("ledger.entries", "entry.posted", "ledger", false, nil); err != nil {
		t.Fatal(err)
	}
	all := parkPublished(t, f, "ledger", "entry.posted", 4)

	// 5 a second: the nack of the second copy comes back before the third
	// goes out (at 50 a second it raced them: 3 returned in 2 of 8 runs).
	res, _ := replayInto(t, f, all, replay.Options{Rate: 100, Canary: 4, CanaryRate: 5, Observe: time.Second})
	if res.Resolved != 1 || res.Returned != 1 || res.Untouched != 2 || !strings.Contains(res.StoppedBecause, "nack") {
		t.Fatalf("result %+v", res)
	}
	if got := ids(f.drain("ledger.entries")); !slices.Equal(got, all[:1]) {
		t.Errorf("destination holds %v, want %v", got, all[:1])
	}
	if got := ids(f.drain("parked")); !slices.Equal(got, all[1:]) {
		t.Errorf("parking queue holds %v, want the nacked and the unpublished %v", got, all[1:])
	}
}

func TestReplayStopsWhenTheDestinationBacklogGrows(t *testing.T) {
	f := newFixture(t, "replay-backlog")
	if err := f.ch.ExchangeDeclare("ledger", "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	f.declare("ledger.entries", nil) // nobody consumes it
	if err := f.ch.QueueBind("ledger.entries", "entry.posted", "ledger", false, nil); err != nil {
		t.Fatal(err)
	}
	all := parkPublished(t, f, "ledger", "entry.posted", 20)

	res, _ := replayInto(t, f, all, replay.Options{Rate: 100, Canary: 6, CanaryRate: 100, Observe: 10 * time.Second, MaxBacklog: 3})
	if !strings.Contains(res.StoppedBecause, "backlog grew by 6") || res.Resolved != 6 || res.Untouched != 14 {
		t.Fatalf("result %+v", res)
	}
	if n := f.depth("parked"); n != 14 {
		t.Errorf("parking queue holds %d, want the 14 never published", n)
	}
}
