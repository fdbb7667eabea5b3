package broker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// Only the lease's connection is closed (a proxy's idle cut, an admin):
// the broker drops the lease queue with it. The holder takes the lease
// again at once, so a second actor is refused as before. Issue 23 item 5:
// bob's discard ran while alice's replay went on.
func TestALeaseWhoseConnectionIsClosedIsTakenAgain(t *testing.T) {
	n := privnode.Start(t)
	f := fixtureOn(t, n.NewVhost("lease-cut"))
	f.declare("orders.dlq", nil)
	alice, bob := aliceAndBob(f)
	ctx := context.Background()
	lease, err := alice.TakeLease(ctx, "orders.dlq", "replaying")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	n.WaitConnections(1) // the lease's own, before its owner is read
	first := brokertest.LeaseOwner(t, f.cfg, "orders.dlq")
	if closed := n.CloseConnectionsNamed("dlqt lease orders.dlq"); closed != 1 {
		t.Fatalf("closed %d lease connections, want 1", closed)
	}
	eventually(t, "the lease taken again after its connection was closed", func() string {
		if owner := brokertest.LeaseOwner(t, f.cfg, "orders.dlq"); owner == "" || owner == first {
			return fmt.Sprintf("the lease queue's owner is %q (the closed connection was %q)", owner, first)
		}
		return ""
	})
	var held *broker.LeaseHeldError
	if _, err := bob.TakeLease(ctx, "orders.dlq", "discarding from"); !errors.As(err, &held) || held.Holder != "alice" {
		t.Fatalf("bob's take while alice holds the lease again: %v", err)
	}
	if err := lease.Check(); err != nil {
		t.Fatalf("alice's lease after it was taken again: %v", err)
	}
}

// The lease's connection is closed while a discard holds its batch, and
// it cannot be taken again (the vhost refuses new connections): the sweep
// acks nothing, every message stays, and the error says the lease is lost.
func TestASweepWhoseLeaseIsLostAcksNothing(t *testing.T) {
	n := privnode.Start(t)
	f := fixtureOn(t, n.NewVhost("lease-lost"))
	f.declare("orders.dlq", nil)
	f.publish("orders.dlq", 20, 64)
	alice := f.live()
	alice.ActAs("alice")
	defer n.LimitConnections(f.cfg.Vhost, -1)
	res, err := alice.Sweep(context.Background(), "orders.dlq", triage.BrowseOptions{}, func(held []triage.Message) []int {
		n.LimitConnections(f.cfg.Vhost, 0) // those open stay, a new one is refused
		if closed := n.CloseConnectionsNamed("dlqt lease orders.dlq"); closed != 1 {
			t.Errorf("closed %d lease connections, want 1", closed)
		}
		picks := make([]int, len(held))
		for i := range picks {
			picks[i] = i
		}
		return picks
	})
	var lost *broker.LeaseLostError
	if !errors.As(err, &lost) || len(res.Taken) != 0 {
		t.Fatalf("a sweep whose lease was lost took %d of %d: %v", len(res.Taken), res.Held, err)
	}
	n.LimitConnections(f.cfg.Vhost, -1)
	f.waitDepth("orders.dlq", 20)
	t.Logf("refused: %v", err)
}

// A replay whose lease is lost for good (its connection closed, and the
// vhost refuses a new one) acks no source after that: the ack fails with
// the loss, the replay is told the lease is lost, and every held source
// goes back to the parking queue. Issue 23 item 5: alice's replay went on
// moving messages while bob's discard ran.
func TestAReplayWhoseLeaseIsLostAcksNoMore(t *testing.T) {
	n := privnode.Start(t)
	f := fixtureOn(t, n.NewVhost("lease-replay"))
	f.declare("orders.entries", nil)
	all := parkPublished(t, f, "", "orders.entries", 5)
	ctx := context.Background()
	port, err := f.live().OpenReplay(ctx, "r-lease", "parked")
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	held, err := port.Hold(ctx, "parked", all, "r-lease")
	if err != nil || len(held) != len(all) {
		t.Fatalf("held %d of %d: %v", len(held), len(all), err)
	}
	defer n.LimitConnections(f.cfg.Vhost, -1)
	n.LimitConnections(f.cfg.Vhost, 0)
	if closed := n.CloseConnectionsNamed("dlqt lease parked"); closed != 1 {
		t.Fatalf("closed %d lease connections, want 1", closed)
	}
	var lost *broker.LeaseLostError
	if err := port.Ack(ctx, all[:2]); !errors.As(err, &lost) {
		t.Fatalf("a replay acked its sources after its lease was lost: %v", err)
	}
	told := time.After(20 * time.Second)
	for waiting := true; waiting; {
		select {
		case s := <-port.Signals():
			waiting = s.Kind != replay.SignalLost || !strings.Contains(s.Reason, "lease")
		case <-told:
			t.Fatal("the replay was never told its lease was lost")
		}
	}
	port.Close()
	n.LimitConnections(f.cfg.Vhost, -1)
	f.waitDepth("parked", len(all))
}
