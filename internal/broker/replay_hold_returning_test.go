package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// A hold that begins while its plan's read is still not back in the queue
// (unacked, with no consumer: what a node returning a read of 1,000,000
// looked like for longer than the hold's 6 s quiet wait) waits for it
// while the queue still counts it, and holds it all. It used to take the
// empty queue for the whole one: held nothing, and the run journalled
// every message "untouched: no longer in" the queue it was still in.
func TestAHoldWaitsForItsPlansReadStillOnItsWayBack(t *testing.T) {
	brokertest.SkipShort(t)
	const n = 50
	f := newFixture(t, "holdreturning")
	f.declare("parked", nil)
	ids := f.publish("parked", n, 64)
	f.waitDepth("parked", n)

	// The plan's read, not back yet: every message got, unacked, on a
	// channel with no consumer.
	reader, err := f.conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for range n {
		d, ok, err := reader.Get("parked", false)
		if err != nil || !ok {
			t.Fatalf("get: %t, %v", ok, err)
		}
		last = d.DeliveryTag
	}
	// The management API counts them, unacked, as it counted a read of a
	// million long begun: its figures lag by up to 5 s.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		q, err := f.management().GetQueue(f.cfg.Vhost, "parked")
		if err == nil && q.Messages == n && q.MessagesUnacknowledged == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the management API does not count the %d unacked: %+v, %v", n, q, err)
		}
	}
	const back = 8 * time.Second // past the quiet wait (6 s) with nothing back
	start := time.Now()          // before the give-back's clock starts: the hold cannot end before start+back
	go func() {
		time.Sleep(back)
		_ = reader.Nack(last, true, true)
	}()

	ctx := context.Background()
	port, err := f.live().OpenReplay(ctx, "rp-holdreturning", "parked")
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	port.HoldLimit, port.ReadDepth = n, n
	held, err := port.Hold(ctx, "parked", ids, "rp-holdreturning")
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != n {
		t.Fatalf("held %d of %d after %v: the hold took its plan's read, still on its way back, for gone", len(held), n, time.Since(start).Round(time.Millisecond))
	}
	if waited := time.Since(start); waited < back {
		t.Errorf("held all %d after %v, before they were back (%v)", n, waited, back)
	}
}
