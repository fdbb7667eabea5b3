package broker_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// parkAtTheLimit parks n messages in a quorum parking queue (no
// limit of its own) through a quorum work queue with x-delivery-limit 19:
// each is rejected with requeue until the work queue dead-letters it, so
// it arrives with x-delivery-count 20, the default limit of 4.x.
func parkAtTheLimit(t *testing.T, f *fixture, parked string, n int) []string {
	t.Helper()
	work := parked + ".work"
	f.declare(parked, amqp.Table{"x-queue-type": "quorum"})
	f.declare(work, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int64(19),
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": parked})
	ids := f.publish(work, n, 64)
	brokertest.RejectUntilParked(t, f.conn, work, parked, n)
	return ids
}

// closeHoldConnections closes this test's hold connections (by vhost and
// name) through the management API, as an operator or a proxy may.
func closeHoldConnections(t *testing.T, f *fixture) {
	t.Helper()
	rh := f.management()
	eventually(t, "the hold connection is listed", func() string {
		conns, err := rh.ListConnections()
		if err != nil {
			return err.Error()
		}
		closed := 0
		for _, c := range conns {
			name, _ := c.ClientProperties["connection_name"].(string)
			if c.Vhost != f.cfg.Vhost || !strings.HasSuffix(name, " hold") {
				continue
			}
			if _, err := rh.CloseConnection(c.Name); err != nil {
				return err.Error()
			}
			closed++
		}
		if closed == 0 {
			return "no hold connection in " + f.cfg.Vhost
		}
		return ""
	})
}

// Issue 23: a quorum parking queue whose 100 messages have no delivery left
// (x-delivery-count 20, the 4.x default limit 20). A replay of two of them
// held the whole queue, and when its hold connection was closed every held
// message spent a delivery: 99 of 100 were dropped. Now the plan says which
// messages a lost hold would cost, the hold reads only up to the last
// selected message and refuses without consent when one of them is at its
// limit, and a lost hold is counted, not said to have gone back.
//
// On 3.10 the parking queue sets no limit, so nothing is at a limit: no
// warning, no refusal, and the close puts every message back.
func TestALostHoldOfAQuorumQueueCostsOnlyTheSelected(t *testing.T) {
	f := newFixture(t, "holdlimit")
	all := parkAtTheLimit(t, f, "parked", 100)
	ctx := context.Background()
	live := f.live()
	b := brokerOf(t, live)
	limited := b.Version.AtLeast(4, 0) // the default limit 20 applies to "parked"
	if limited && !b.FreeRequeue {
		// 4.0-4.2: every read counts, so even the browse that makes the plan
		// would drop these messages: it asks first, and changes nothing.
		_, err := triage.Inspect(ctx, live, "parked", triage.BrowseOptions{Limit: 1000}, redact.New())
		var cost *triage.DeliveryCostError
		if !errors.As(err, &cost) {
			t.Fatalf("%s: a browse of messages at their limit went ahead without consent: %v", b.Version, err)
		}
		f.waitDepth("parked", 100)
		return
	}
	in, err := triage.Inspect(ctx, live, "parked", triage.BrowseOptions{Limit: 1000}, redact.New())
	if err != nil {
		t.Fatal(err)
	}
	if got := in.Messages[0].DeliveryCount; limited && got < 20 {
		t.Fatalf("%s: the parked message reads x-delivery-count %d, want 20 or more", b.Version, got)
	}
	// The first two in the queue: the work queue dead-letters them in the
	// order they reach its limit, not always in publish order.
	selected := []string{in.Messages[0].ID, in.Messages[1].ID}
	rest := slices.DeleteFunc(slices.Clone(all), func(id string) bool { return slices.Contains(selected, id) })
	plan, err := replay.NewPlan(in, triage.Selection{IDs: selected}, replay.Options{Rate: 10, Canary: 1, Observe: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	warned := strings.Contains(strings.Join(plan.Warnings, "\n"), "no delivery left")
	if warned != limited {
		t.Errorf("%s: plan warnings %q: a warning of messages with no delivery left is due exactly when the queue has a limit (%v)", b.Version, plan.Warnings, limited)
	}
	open := func(plan replay.Plan, accept bool) *broker.Replay {
		port, err := live.OpenReplay(ctx, plan.ID, plan.Queue)
		if err != nil {
			t.Fatal(err)
		}
		port.AcceptDeliveryCost = accept
		port.HoldLimit = plan.HoldLimit(0)
		return port
	}

	port := open(plan, true)
	defer port.Close()
	held, err := port.Hold(ctx, "parked", selected, plan.ID)
	if err != nil || len(held) != 2 {
		t.Fatalf("hold: %d held, %v", len(held), err)
	}
	if ready := f.depth("parked"); ready != 98 {
		t.Errorf("%d ready while the hold is up: the hold must read up to the last selected message only (2), not %d", ready, 100-ready)
	}
	closeHoldConnections(t, f)
	var lost replay.Signal
	select {
	case lost = <-port.Signals():
	case <-time.After(20 * time.Second):
		t.Fatal("no signal of the lost hold")
	}
	if lost.Kind != replay.SignalLost || strings.Contains(lost.Reason, "went back") || !strings.Contains(lost.Reason, "2 held") {
		t.Errorf("lost hold reported as %+v: want the count it held, not that they went back", lost)
	}
	want := 100
	if limited {
		want = 98 // the two held had no delivery left: the broker drops them
	}
	f.waitDepth("parked", want)
	time.Sleep(time.Second) // nothing else goes later
	in, err = triage.Inspect(ctx, live, "parked", triage.BrowseOptions{Limit: 1000}, redact.New())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range in.Messages {
		ids = append(ids, m.ID)
	}
	for _, id := range rest {
		if !slices.Contains(ids, id) {
			t.Errorf("%s: %s, never selected, is gone from the parking queue", b.Version, id)
		}
	}
	t.Logf("%s: %d of 100 left after the lost hold; signal %q", b.Version, len(ids), lost.Reason)
	if limited {
		refusedWithoutConsent(t, f, live)
	}
}

// refusedWithoutConsent: a hold that would take messages with no delivery
// left is refused without consent, and the refusal costs nothing (on 4.3 a
// requeue is free).
func refusedWithoutConsent(t *testing.T, f *fixture, live *broker.Live) {
	t.Helper()
	ctx := context.Background()
	parkAtTheLimit(t, f, "parked.again", 10)
	in, err := triage.Inspect(ctx, live, "parked.again", triage.BrowseOptions{Limit: 1000}, redact.New())
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{in.Messages[0].ID, in.Messages[1].ID} // the head: the hold reads these two only
	plan, err := replay.NewPlan(in, triage.Selection{IDs: ids}, replay.Options{Rate: 10, Canary: 1, Observe: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	port, err := live.OpenReplay(ctx, plan.ID, plan.Queue)
	if err != nil {
		t.Fatal(err)
	}
	port.HoldLimit = plan.HoldLimit(0)
	_, err = port.Hold(ctx, plan.Queue, ids, plan.ID)
	port.Close()
	var atLimit *triage.HoldAtLimitError
	if !errors.As(err, &atLimit) || atLimit.AtLimit != 2 || !strings.Contains(err.Error(), "accept-delivery-cost") {
		t.Fatalf("a hold of messages with no delivery left went ahead without consent: %v", err)
	}
	f.waitDepth(plan.Queue, 10)
}
