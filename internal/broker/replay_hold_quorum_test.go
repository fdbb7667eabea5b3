package broker_test

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// A quorum queue gives a consumer without a prefetch limit a credit of
// 2,000 (3.10 and later), so a hold of more than that, which keeps every
// message unacked, used to stall at 2,000 and fail after 30 s ("the broker
// sent nothing"). The hold asks for what it means to read.
func TestReplayHoldsMoreThanTwoThousandFromAQuorumQueue(t *testing.T) {
	brokertest.SkipShort(t)
	const n = 2500
	f := newFixture(t, "holdq")
	f.declare("parked", quorumParking)
	all := make([]string, n)
	var last *amqp.DeferredConfirmation
	for i := range n {
		p := testMessage(i, []byte(`{"n":1}`))
		dc, err := f.ch.PublishWithDeferredConfirmWithContext(context.Background(), "", "parked", false, false, p)
		if err != nil {
			t.Fatal(err)
		}
		all[i], last = p.MessageId, dc
	}
	if !last.Wait() {
		t.Fatal("the broker nacked a parked message")
	}
	ctx := context.Background()
	port, err := f.live().OpenReplay(ctx, "rp-holdq", "parked")
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	port.AcceptDeliveryCost = true
	start := time.Now()
	held, err := port.Hold(ctx, "parked", all, "rp-holdq")
	if err != nil {
		t.Fatalf("hold of %d from a quorum queue: %v (after %.1f s)", n, err, time.Since(start).Seconds())
	}
	t.Logf("held %d of %d in %.1f s", len(held), n, time.Since(start).Seconds())
	if len(held) != n {
		t.Errorf("held %d of %d", len(held), n)
	}
}
