package broker

import (
	"context"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage/replay"
)

// A blocked connection makes a publish hang in the socket write, so Publish
// must not write while the broker blocks: it waits for the unblock or its
// context, and the replay hears both changes.
func TestPublishWaitsWhileTheBrokerBlocks(t *testing.T) {
	r := &Replay{signals: make(chan replay.Signal, 4), unblocked: make(chan struct{}), done: make(chan struct{})}
	close(r.unblocked)

	r.setBlocked(amqp.Blocking{Active: true, Reason: "low on memory"})
	if s := <-r.signals; s.Kind != replay.SignalBlocked || s.Reason != "low on memory" {
		t.Fatalf("signal %+v", s)
	}
	r.setBlocked(amqp.Blocking{Active: true, Reason: "again"}) // no second report
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Publish(ctx, replay.Publishing{ItemID: "m"}); err == nil || !strings.Contains(err.Error(), "blocked") {
		t.Fatalf("Publish while blocked: %v", err)
	}

	r.setBlocked(amqp.Blocking{Active: false})
	if s := <-r.signals; s.Kind != replay.SignalUnblocked {
		t.Fatalf("signal %+v", s)
	}
	select {
	case <-r.gate():
	default:
		t.Error("the gate stayed shut after the unblock")
	}
	if len(r.signals) != 0 {
		t.Errorf("%d extra signals", len(r.signals))
	}
}
