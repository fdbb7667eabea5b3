package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// Under a sustained memory alarm the broker stops reading a connection that
// published, so it never answers connection.close: closing the replay must
// still end, in bounded time, and put the held sources back.
func TestReplayClosesDuringASustainedMemoryAlarm(t *testing.T) {
	n := privnode.Start(t)
	f := fixtureOn(t, n.NewVhost("alarm"))
	if err := f.ch.ExchangeDeclare("ledger", "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	f.declare("ledger.entries", nil)
	if err := f.ch.QueueBind("ledger.entries", "entry.posted", "ledger", false, nil); err != nil {
		t.Fatal(err)
	}
	all := parkMany(t, f, "ledger", "entry.posted", 50)
	ctx := context.Background()
	live, err := broker.Dial(ctx, f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	port, err := live.OpenReplay(ctx, "rp-alarm", "parked")
	if err != nil {
		t.Fatal(err)
	}
	held, err := port.Hold(ctx, "parked", all, "rp-alarm")
	if err != nil || len(held) != len(all) {
		t.Fatalf("held %d of %d: %v", len(held), len(all), err)
	}

	n.SetMemoryAlarm()
	t.Cleanup(n.ClearMemoryAlarm) // before the node stops: other cleanups close connections
	route := triage.Route{Exchange: "ledger", RoutingKey: "entry.posted"}
	for _, h := range held { // the first publish gets the connection blocked
		m, err := port.Load(ctx, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		pubCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, _ = port.Publish(pubCtx, replay.Publishing{ItemID: h.ID, Route: route, Message: m})
		cancel()
	}

	start := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- port.Close() }()
	select {
	case err := <-closed:
		t.Logf("Close returned after %.1f s: %v", time.Since(start).Seconds(), err)
	case <-time.After(30 * time.Second):
		t.Fatalf("Close still blocked %s into a memory alarm: hung", time.Since(start).Round(time.Second))
	}
	n.ClearMemoryAlarm()
	checkNothingLost(t, fixtureOn(t, f.cfg), all, "parked", "ledger.entries")
}
