package broker_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// Replaying into a full drop-head queue pushes one of ITS messages into
// the parking queue. The canary used to pass; now the dry run names the
// bounded destination, and the observe phase counts the pushed-out message
// as collateral and stops. Checked by id at source and destination.
func TestReplayIntoAFullBoundedQueueIsCollateralDamage(t *testing.T) {
	f := newFixture(t, "replay-collateral")
	ctx := context.Background()
	for _, x := range []struct{ name, kind string }{{"ledger", "direct"}, {"ledger.dlx", "fanout"}} {
		if err := f.ch.ExchangeDeclare(x.name, x.kind, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	f.declare("ledger.entries", amqp.Table{"x-max-length": int32(3), "x-dead-letter-exchange": "ledger.dlx"})
	if err := f.ch.QueueBind("ledger.entries", "entry.posted", "ledger", false, nil); err != nil {
		t.Fatal(err)
	}
	f.declare("parked", nil)
	if err := f.ch.QueueBind("parked", "", "ledger.dlx", false, nil); err != nil {
		t.Fatal(err)
	}
	var older []string
	for _, id := range []string{"old-1", "old-2", "old-3"} {
		p := testMessage(0, []byte(`{}`))
		p.MessageId = id
		f.publishOne("ledger", "entry.posted", p)
		older = append(older, id)
	}
	all := parkPublished(t, f, "ledger", "entry.posted", 3)

	live := f.live()
	in, err := triage.Inspect(ctx, live, "parked", triage.BrowseOptions{}, redact.New())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := replay.NewPlan(in, triage.Selection{IDs: all}, replay.Options{Rate: 50, Canary: 1, CanaryRate: 50, Observe: 3 * time.Second, AutoRamp: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Bounded) != 1 || plan.Bounded[0].Name != "ledger.entries" || plan.Bounded[0].MaxLength != 3 ||
		!strings.Contains(strings.Join(plan.Warnings, " "), "ledger.entries is bounded (max-length 3, overflow drop-head)") {
		t.Errorf("the dry run does not say the destination is bounded: %+v %q", plan.Bounded, plan.Warnings)
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
	defer j.Close()
	res, err := replay.Run(ctx, plan, port, journal.NewRecorder(j, "test", "host"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.StoppedBecause, "not replayed were dead-lettered from destination ledger.entries") ||
		!slices.Equal(res.Collateral, []string{"old-1"}) || res.Resolved != 1 || res.Untouched != 2 {
		t.Fatalf("result %+v: the canary passed over collateral damage", res)
	}
	if got := ids(f.drain("ledger.entries")); !slices.Equal(got, []string{"old-2", "old-3", all[0]}) {
		t.Errorf("destination holds %v", got)
	}
	got := ids(f.drain("parked"))
	slices.Sort(got)
	want := []string{all[1], all[2], older[0]}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("parking queue holds %v, want %v: nothing lost", got, want)
	}
	st, err := replay.Find(j, plan.ID)
	if err != nil || !slices.Equal(st.Collateral, []string{"old-1"}) {
		t.Errorf("journal: collateral %v, %v", st.Collateral, err)
	}
}

// During a live incident the destination keeps dead-lettering messages of
// its own (its consumer rejects every "own-" message, four a second, from
// before the replay to after it). The replay counts that rate before its
// canary and goes on: none of those is collateral. Checked by id: every
// replayed message reached the destination's consumer, and the parking
// queue holds only the destination's own dead letters.
func TestReplayGoesOnWhileTheDestinationDeadLettersAtItsOwnRate(t *testing.T) {
	f := newFixture(t, "replay-baseline")
	ctx := context.Background()
	for _, x := range []struct{ name, kind string }{{"ledger", "direct"}, {"ledger.dlx", "fanout"}} {
		if err := f.ch.ExchangeDeclare(x.name, x.kind, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	f.declare("ledger.entries", amqp.Table{"x-dead-letter-exchange": "ledger.dlx"})
	if err := f.ch.QueueBind("ledger.entries", "entry.posted", "ledger", false, nil); err != nil {
		t.Fatal(err)
	}
	all := parkPublished(t, f, "ledger", "entry.posted", 40)
	if err := f.ch.QueueBind("parked", "", "ledger.dlx", false, nil); err != nil {
		t.Fatal(err)
	}
	delivered := consumeRejectingOwn(t, fixtureOn(t, f.cfg), "ledger.entries")
	stopOwn := publishOwnEvery(t, fixtureOn(t, f.cfg), 250*time.Millisecond)

	live := f.live()
	in, err := triage.Inspect(ctx, live, "parked", triage.BrowseOptions{}, redact.New())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := replay.NewPlan(in, triage.Selection{IDs: all}, replay.Options{
		Rate: 20, Canary: 2, CanaryRate: 20, Observe: time.Second, AutoRamp: true, Baseline: 3 * time.Second})
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
	defer j.Close()
	res, err := replay.Run(ctx, plan, port, journal.NewRecorder(j, "test", "host"), nil, nil)
	own := stopOwn()
	t.Logf("replay: %d resolved, stopped %q; baseline %.2f/s, %d dead letters of its own at it; %d own published", res.Resolved, res.StoppedBecause, res.BaselineRate, res.DeadLettersAtBaseline, own)
	if err != nil || res.StoppedBecause != "" || res.Resolved != len(all) || len(res.Collateral) > 0 {
		t.Fatalf("the destination's own dead letters stopped the replay: %+v, %v", res, err)
	}
	if res.BaselineRate == 0 || res.DeadLettersAtBaseline == 0 {
		t.Errorf("baseline %.2f/s, %d at it: the destination's own dead letters were not seen", res.BaselineRate, res.DeadLettersAtBaseline)
	}
	port.Close()
	eventually(t, "every replayed message at the destination's consumer", func() string {
		if missing := missingIDs(all, delivered()); len(missing) > 0 {
			return fmt.Sprintf("%d missing, e.g. %s", len(missing), missing[0])
		}
		return ""
	})
	for _, id := range ids(f.drain("parked")) {
		if !strings.HasPrefix(id, "own-") {
			t.Errorf("%s is still parked", id)
		}
	}
}

// consumeRejectingOwn consumes queue on f: an "own-" message is rejected
// (dead-lettered), every other one acked and returned by delivered.
func consumeRejectingOwn(t *testing.T, f *fixture, queue string) (delivered func() []string) {
	t.Helper()
	ds, err := f.ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	go func() {
		for d := range ds {
			if strings.HasPrefix(d.MessageId, "own-") {
				_ = d.Reject(false)
				continue
			}
			_ = d.Ack(false)
			mu.Lock()
			got = append(got, d.MessageId)
			mu.Unlock()
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// publishOwnEvery publishes an "own-N" message to the destination's route
// every period until the returned stop, which says how many it published.
func publishOwnEvery(t *testing.T, f *fixture, period time.Duration) (stop func() int) {
	t.Helper()
	quit, done := make(chan struct{}), make(chan int)
	go func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		n := 0
		for {
			select {
			case <-quit:
				done <- n
				return
			case <-tick.C:
				p := testMessage(n, []byte(`{}`))
				p.MessageId = fmt.Sprintf("own-%d", n)
				if err := f.ch.PublishWithContext(context.Background(), "ledger", "entry.posted", false, false, p); err != nil {
					t.Errorf("publish own-%d: %v", n, err)
				}
				n++
			}
		}
	}()
	return func() int { close(quit); return <-done }
}
