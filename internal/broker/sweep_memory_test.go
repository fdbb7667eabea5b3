package broker_test

import (
	"context"
	"slices"
	"testing"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/triage"
)

// A discard of 5 messages by id out of a sweep of 60,000 × 1 KiB keeps of
// the others only a delivery tag and a base id each (the sweep hands every
// message to the discard as it is read, BrowseOptions.Each): the live heap
// grows by a window of messages, not by the 60 MiB of bodies. Exactly the
// 5 are gone, verified by a second (streamed) read, the rest in order.
// The window's growth depends on how far the reader lags the broker: of
// 30,000, 4-7 MiB alone and 15.4 MiB in a .ci/run's RabbitMQ 4.0 pass
// beside the other shards, where the bound was 12 MiB. Of 60,000 (the
// tags and base ids grow too): 9.6-10.3 MiB alone, on 3.10 and 4.0. A
// bound at half their bodies still tells a window from the whole queue.
func TestDiscardOfAFewOutOfALargeSweepKeepsOnlyThem(t *testing.T) {
	brokertest.SkipShort(t)
	const n = 60000
	f := newFixture(t, "sweepbig")
	f.declare("orders.parking", nil)
	all := f.publish("orders.parking", n, 1024)
	f.waitDepth("orders.parking", n)
	l := f.live()
	top, err := l.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pick := pickEvery(all, 5)
	var rec recorded
	stop := make(chan struct{})
	grew := brokertest.LiveHeapGrowth(stop)
	res, err := triage.Discard(context.Background(), l, top, &rec, triage.DiscardRequest{
		Vhost: f.cfg.Vhost, Queue: "orders.parking", Reason: "duplicates", Selection: triage.Selection{IDs: pick},
		Browse: triage.BrowseOptions{Limit: n, MemoryBudget: 4 << 20},
	})
	close(stop)
	peak := grew()
	if err != nil || !slices.Equal(res.Discarded, pick) || !res.Verified || res.Held != n {
		t.Fatalf("result %+v, %v", res, err)
	}
	t.Logf("discarded %d of %d × 1 KiB; live heap grew by at most %.1f MiB", len(pick), n, float64(peak)/(1<<20))
	const bound = 30 << 20
	if peak > bound {
		t.Errorf("the live heap grew by %.1f MiB, want < %d MiB: the sweep keeps what it does not take", float64(peak)/(1<<20), bound>>20)
	}
	f.waitDepth("orders.parking", n-len(pick))
	want := slices.DeleteFunc(slices.Clone(all), func(id string) bool { return slices.Contains(pick, id) })
	if got, _ := streamedIDs(t, f, "orders.parking", 0); !slices.Equal(got, want) {
		t.Errorf("left %d ids, want the %d others in order", len(got), len(want))
	}
}
