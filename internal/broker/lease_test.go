package broker_test

import (
	"context"
	"errors"
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
	alice, bob := f.live(), f.live()
	alice.ActAs("alice")
	bob.ActAs("bob")
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
	inner.Release() // releases nothing: the caller still holds it
	var held *broker.LeaseHeldError
	if _, err := other.TakeLease(ctx, "orders.dlq", "discarding from"); !errors.As(err, &held) {
		t.Fatalf("the inner release freed the lease: %v", err)
	}
}
