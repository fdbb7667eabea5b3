package broker_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// pickEvery picks n ids spread over all, the last one included.
func pickEvery(all []string, n int) []string {
	var out []string
	for i := len(all) - 1; i >= 0 && len(out) < n; i -= len(all) / n {
		out = append(out, all[i])
	}
	slices.Sort(out)
	return out
}

// consumersWhile samples the queue's consumer count (a passive declare on
// a connection of its own, answered by the queue process at once) until
// stop is closed, and returns the largest seen.
func consumersWhile(t *testing.T, f *fixture, queue string, stop <-chan struct{}) func() int {
	t.Helper()
	conn := brokertest.Dial(t, f.cfg)
	most := 0
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			ch, err := conn.Channel()
			if err != nil {
				return
			}
			if q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil); err == nil {
				most = max(most, q.Consumers)
			}
			ch.Close()
		}
	}()
	return func() int { wg.Wait(); return most }
}

// A replay hold of 100,000 × 1 KiB, 10 of them selected, reads through
// windowed consumers (more than one consumer on the queue at a time, none
// asking an unlimited prefetch) and keeps of the 99,990 it does not replay
// only a delivery tag and a base id each: the live heap while it holds
// grows by a few MiB, not by the 100 MiB of bodies. Released, the queue
// holds the same ids in the same order.
func TestReplayHoldOfAHundredThousandKeepsOnlyWhatItReplays(t *testing.T) {
	brokertest.SkipShort(t)
	const n = 100000
	f := newFixture(t, "holdbig")
	f.declare("parked", nil)
	all := f.publish("parked", n, 1024)
	f.waitDepth("parked", n)
	picked := pickEvery(all, 10)

	ctx := context.Background()
	live := f.live()
	port, err := live.OpenReplay(ctx, "rp-holdbig", "parked")
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	port.HoldLimit = n

	stop := make(chan struct{})
	most := consumersWhile(t, f, "parked", stop)
	grew := brokertest.LiveHeapGrowth(stop)
	start := time.Now()
	held, err := port.Hold(ctx, "parked", picked, "rp-holdbig")
	close(stop)
	if err != nil {
		t.Fatalf("Hold: %v", err)
	}
	peak := grew()
	t.Logf("held %d of %d in %.1f s; live heap grew by at most %.1f MiB; at most %d consumers at once",
		len(held), n, time.Since(start).Seconds(), float64(peak)/(1<<20), most())

	var got []string
	for _, h := range held {
		got = append(got, h.ID)
		if len(h.BodySHA256) != 64 {
			t.Errorf("held %s with no body sha256 (%q)", h.ID, h.BodySHA256)
		}
	}
	if !slices.Equal(got, picked) {
		t.Fatalf("held %v, want %v", got, picked)
	}
	const bound = 32 << 20
	if peak > bound {
		t.Errorf("the live heap grew by %.1f MiB while holding 10 of %d × 1 KiB, want < %d MiB", float64(peak)/(1<<20), n, bound>>20)
	}
	if c := most(); c < 2 {
		t.Errorf("at most %d consumer(s) on the queue during the hold: a hold above 65,535 must read through windows, not one unlimited prefetch", c)
	}
	runtime.KeepAlive(held)

	port.Close()
	f.waitDepth("parked", n)
	ids, _ := streamedIDs(t, f, "parked", 0)
	if !slices.Equal(ids, all) {
		t.Fatalf("after the hold the queue holds %d ids, not the %d published in order", len(ids), len(all))
	}
}

// A quorum queue's hold keeps its consumers up while it holds (see
// replay_hold_quorum.go): a hold above 65,535 messages shows, in the
// management API, several consumers on the queue, each with a prefetch
// between 1 and 65,535, never 0 (unlimited). From 4.3 a hold of a queue
// with a delivery limit cancels its consumers after the read instead (see
// keepsConsumersUp): there the queue sets none (-1), so they stay up to be
// seen.
func TestQuorumReplayHoldAboveWhatBasicQosTakesAsksNoUnlimitedPrefetch(t *testing.T) {
	brokertest.SkipShort(t)
	const n = 66000
	f := newFixture(t, "holdqbig")
	args := quorumParking
	if brokerOf(t, f.live()).Version.AtLeast(4, 3) {
		args = amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int64(-1)}
	}
	f.declare("parked", args)
	all := f.publish("parked", n, 16)
	f.waitDepth("parked", n)

	ctx := context.Background()
	port, err := f.live().OpenReplay(ctx, "rp-holdqbig", "parked")
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	port.HoldLimit, port.AcceptDeliveryCost = n, true
	picked := pickEvery(all, 3)
	held, err := port.Hold(ctx, "parked", picked, "rp-holdqbig")
	if err != nil {
		t.Fatalf("Hold: %v", err)
	}
	if len(held) != len(picked) {
		t.Fatalf("held %d, want %d", len(held), len(picked))
	}
	rh := f.management()
	eventually(t, "the hold's consumers in the management API", func() string {
		cs, err := rh.ListConsumersIn(f.cfg.Vhost)
		if err != nil {
			return err.Error()
		}
		var prefetch []int
		for _, c := range cs {
			if c.Queue.Name == "parked" {
				prefetch = append(prefetch, c.PrefetchCount)
			}
		}
		if len(prefetch) < 2 {
			return fmt.Sprintf("consumers' prefetch %v: want several windows", prefetch)
		}
		sum := 0
		for _, p := range prefetch {
			if p < 1 || p > 65535 {
				t.Fatalf("a hold consumer has prefetch %d (all: %v): never unlimited", p, prefetch)
			}
			sum += p
		}
		if sum != n { // the management API lists consumers seconds late
			return fmt.Sprintf("the consumers' prefetch %v adds up to %d, want the %d the hold reads", prefetch, sum, n)
		}
		t.Logf("%d consumers, prefetch %v", len(prefetch), prefetch)
		return ""
	})
	port.Close()
	f.waitDepth("parked", n)
}

// Why a hold keeps what it does not select unacked until its consumers are
// cancelled, instead of requeueing each as it passes: on a classic queue a
// message requeued while the consumer is up goes back to its old place at
// the head and is delivered straight back to that consumer, redelivered,
// so a hold that released as it read would read the same message forever.
func TestRequeueToALiveHoldComesStraightBack(t *testing.T) {
	brokertest.SkipShort(t)
	f := newFixture(t, "requeue")
	f.declare("parked", nil)
	want := f.publish("parked", 3, 16)
	ch, err := f.conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if err := ch.Qos(3, 0, false); err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume("parked", "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	next := func() amqp.Delivery {
		select {
		case d := <-ds:
			return d
		case <-time.After(5 * time.Second):
			t.Fatal("no delivery in 5 s")
		}
		return amqp.Delivery{}
	}
	first := next()
	next()
	next()
	if err := first.Nack(false, true); err != nil {
		t.Fatal(err)
	}
	again := next()
	if again.MessageId != want[0] || !again.Redelivered {
		t.Fatalf("after a requeue the live consumer got %s (redelivered %v), want %s back, redelivered", again.MessageId, again.Redelivered, want[0])
	}
}
