package broker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
)

func TestLeaseIsExclusiveSaysWhoHoldsItAndIsFreedOnRelease(t *testing.T) {
	f := newFixture(t, "lease")
	f.declare("orders.dlq", nil)
	alice, bob := aliceAndBob(f)
	ctx := context.Background()

	lease, err := alice.TakeLease(ctx, "orders.dlq", "replaying")
	if err != nil {
		t.Fatalf("alice's lease: %v", err)
	}
	_, err = bob.TakeLease(ctx, "orders.dlq", "discarding from")
	var held *broker.LeaseHeldError
	if !errors.As(err, &held) {
		t.Fatalf("bob took a held lease: %v", err)
	}
	if held.Holder != "alice" || held.Doing != "replaying" || held.Since.IsZero() ||
		!strings.HasPrefix(err.Error(), "alice is replaying orders.dlq since ") {
		t.Fatalf("refusal %q (%+v)", err, held)
	}
	// bob's sweep is refused before it holds anything
	_, err = bob.Sweep(ctx, "orders.dlq", triage.BrowseOptions{}, func([]triage.Message) []int { return nil })
	if !errors.As(err, &held) {
		t.Fatalf("bob's sweep ran beside alice's replay: %v", err)
	}
	top, err := bob.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range top.Queues {
		if strings.HasPrefix(q.Name, broker.LeasePrefix) {
			t.Errorf("the topology shows the lease queue %s", q.Name)
		}
	}
	if err := lease.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := bob.TakeLease(ctx, "orders.dlq", "discarding from")
	if err != nil {
		t.Fatalf("the lease stayed held after release: %v", err)
	}
	again.Release()
}

// aliceAndBob are two readers of f's vhost acting as alice and bob.
func aliceAndBob(f *fixture) (alice, bob *broker.Live) {
	alice, bob = f.live(), f.live()
	alice.ActAs("alice")
	bob.ActAs("bob")
	return alice, bob
}

func TestLeaseRaceLetsExactlyOneProceed(t *testing.T) {
	f := newFixture(t, "leaserace")
	f.declare("orders.dlq", amqp.Table{})
	const racers = 6
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won, refused int
	var leases []*broker.Lease
	for i := range racers {
		l := f.live()
		l.ActAs(string(rune('a' + i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			ls, err := l.TakeLease(context.Background(), "orders.dlq", "replaying")
			mu.Lock()
			defer mu.Unlock()
			var held *broker.LeaseHeldError
			switch {
			case err == nil:
				won++
				leases = append(leases, ls)
			case errors.As(err, &held):
				refused++
			default:
				t.Errorf("racer %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	for _, ls := range leases {
		ls.Release()
	}
	if won != 1 || refused != racers-1 {
		t.Fatalf("%d took the lease and %d were refused, want 1 and %d", won, refused, racers-1)
	}
}

func TestLeaseUnderWithLeaseIsTheCallersOwn(t *testing.T) {
	f := newFixture(t, "leaseown")
	f.declare("orders.dlq", nil)
	a, other := f.live(), f.live()
	a.ActAs("alice")
	ctx := context.Background()
	lease, err := a.TakeLease(ctx, "orders.dlq", "replaying")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	inner, err := a.TakeLease(broker.WithLease(ctx, lease), "orders.dlq", "replaying")
	if err != nil {
		t.Fatalf("the holder's own second take: %v", err)
	}
	if inner.Lost() != lease.Lost() || inner.Check() != nil {
		t.Error("the inner lease does not answer with the caller's: a replay under it would not see the caller's lease lost")
	}
	inner.Release() // releases nothing: the caller still holds it
	var held *broker.LeaseHeldError
	if _, err := other.TakeLease(ctx, "orders.dlq", "discarding from"); !errors.As(err, &held) {
		t.Fatalf("the inner release freed the lease: %v", err)
	}
}

// A lease queue's arguments are whatever its declarer wrote: a holder
// made of escape sequences reaches no terminal raw, and who holds the
// lease is said from the broker's own word on the owning connection
// (issue 22 item 11).
func TestALeaseHolderIsSanitisedAndNamedByTheBroker(t *testing.T) {
	f := newFixture(t, "leasetext")
	f.declare("orders.dlq", nil)
	ch, err := f.conn.Channel() // an exclusive queue: this connection holds the lease
	if err != nil {
		t.Fatal(err)
	}
	_, err = ch.QueueDeclare(broker.LeasePrefix+"orders.dlq", false, true, true, false, amqp.Table{
		"x-dlqt-holder": "root\x1b[2J\x1b]0;owned\x07", "x-dlqt-doing": "replaying\x1b[31m", "x-dlqt-since": "2026-12-02T20:00:00Z",
	})
	if err != nil {
		t.Fatal(err)
	}
	user := f.management().Username
	bob := f.live()
	// The management API names a queue's owner once its statistics have
	// seen the connection (seconds).
	eventually(t, "the refusal names the holder safely", func() string {
		_, err := bob.TakeLease(context.Background(), "orders.dlq", "discarding from")
		var held *broker.LeaseHeldError
		if !errors.As(err, &held) {
			t.Fatalf("took a held lease: %v", err)
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\x1b\x07") {
			t.Fatalf("the refusal carries the holder's escape sequences raw: %q", msg)
		}
		if held.User != user || !strings.Contains(msg, "(broker user "+user+" from ") {
			return fmt.Sprintf("the refusal does not say the broker's user %q of the holding connection: %q", user, msg)
		}
		return ""
	})
}
