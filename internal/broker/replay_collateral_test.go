package broker_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
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
