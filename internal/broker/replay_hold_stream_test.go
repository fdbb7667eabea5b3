package broker_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// A streamed hold of a classic queue reports each selected message as it
// reads it, in queue order, while it reads on; sources acked meanwhile
// (as a replay acks what its destination confirmed) are gone, and once
// released the queue holds every other message in its order.
func TestAStreamedHoldReportsWhatItReadsWhileItReadsOn(t *testing.T) {
	brokertest.SkipShort(t)
	const n = 20000
	f := newFixture(t, "holdstream")
	f.declare("parked", nil)
	all := f.publish("parked", n, 256)
	f.waitDepth("parked", n)
	var picked []string // every other one: the rest is read past and kept held
	for i := 0; i < n; i += 2 {
		picked = append(picked, all[i])
	}

	ctx := context.Background()
	port, err := f.live().OpenReplay(ctx, "rp-holdstream", "parked")
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	port.HoldLimit = n
	held, err := port.HoldStream(ctx, "parked", picked, "rp-holdstream")
	if err != nil {
		t.Fatal(err)
	}
	var got, acked []string
	batches := 0
	var first time.Time
	for b := range held {
		if b.Err != nil {
			t.Fatalf("the read ended short: %v", b.Err)
		}
		if len(b.Held) == 0 {
			continue
		}
		batches++
		for _, h := range b.Held {
			if h.Copy || len(h.BodySHA256) != 64 {
				t.Fatalf("held %+v", h)
			}
			got = append(got, h.ID)
		}
		if first.IsZero() {
			first = time.Now()
			for _, h := range b.Held {
				acked = append(acked, h.ID)
			}
			if err := port.Ack(ctx, acked); err != nil { // while the read goes on
				t.Fatalf("Ack during the read: %v", err)
			}
		}
	}
	ended := time.Since(first)
	t.Logf("%d held in %d batches; the first came %v before the read ended; %d acked from it", len(got), batches, ended, len(acked))
	if !slices.Equal(got, picked) {
		t.Fatalf("held %d ids, not the %d picked in queue order", len(got), len(picked))
	}
	if batches < 2 || ended < 100*time.Millisecond {
		t.Errorf("%d batch(es), the first %v before the end: the hold did not report while it read", batches, ended)
	}
	if len(acked) == 0 || len(acked) >= len(picked) {
		t.Fatalf("acked %d from the first batch", len(acked))
	}
	if err := port.Close(); err != nil {
		t.Fatal(err)
	}
	want := slices.DeleteFunc(slices.Clone(all), func(id string) bool { return slices.Contains(acked, id) })
	f.waitDepth("parked", len(want))
	if ids, _ := streamedIDs(t, f, "parked", 0); !slices.Equal(ids, want) {
		t.Fatalf("after the hold the queue holds %d ids, want the %d not acked, in order", len(ids), len(want))
	}
}

// A streamed hold stopped half-way (the replay ended first) stops reading
// and, once released, leaves the queue exactly as it was.
func TestAStoppedStreamedHoldLeavesTheQueueAsItWas(t *testing.T) {
	brokertest.SkipShort(t)
	const n = 20000
	f := newFixture(t, "holdstop")
	f.declare("parked", nil)
	all := f.publish("parked", n, 256)
	f.waitDepth("parked", n)

	ctx := context.Background()
	port, err := f.live().OpenReplay(ctx, "rp-holdstop", "parked")
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	port.HoldLimit = n
	held, err := port.HoldStream(ctx, "parked", all, "rp-holdstop")
	if err != nil {
		t.Fatal(err)
	}
	seen := len((<-held).Held)
	port.StopHold()
	for b := range held { // closed once the read has stopped
		seen += len(b.Held)
	}
	if seen == 0 || seen >= n {
		t.Fatalf("%d of %d reported before the stop", seen, n)
	}
	if err := port.Close(); err != nil {
		t.Fatal(err)
	}
	f.waitDepth("parked", n)
	if ids, _ := streamedIDs(t, f, "parked", 0); !slices.Equal(ids, all) {
		t.Fatalf("after the stopped hold the queue holds %d ids, not the %d published in order", len(ids), n)
	}
}
