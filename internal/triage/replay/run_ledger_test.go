package replay

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A run keeps of each of its plan's items two bytes beside the one map
// from id to index: held and confirmed, a million items cost it 57.9 MB.
// Its maps of every id (the items again, held, outcome, confirmed, acked)
// took 413.2 MB in this test; in a profile of a replay of 1,000,000 they
// were 225 MB of its heap.
func TestARunOfAMillionKeepsAFewBytesAnItem(t *testing.T) {
	if testing.Short() {
		t.Skip("a million items")
	}
	const n = 1000000
	plan := Plan{ID: "rp-million", Queue: "q", Options: Options{Rate: 1}.withDefaults(), Allowed: true}
	plan.Items = make([]Item, n)
	held := make([]HeldMessage, n)
	sum := triage.BodySHA256(fakeBody)
	for i := range plan.Items {
		id := fmt.Sprintf("m-%07d", i)
		plan.Items[i] = Item{ID: id, Route: triage.Route{Exchange: "orders", RoutingKey: "order.created"}}
		held[i] = HeldMessage{ID: id, BodySHA256: sum}
	}
	before := liveHeap()
	r := newRun(plan, Runner{Journal: &journalSpy{}})
	r.sortHeld(held, map[string]string{})
	for _, it := range plan.Items { // every copy confirmed, as before its ack
		r.settled(confirmResult{id: it.ID, res: PublishResult{Confirmed: true}})
	}
	r.toConfirm = nil // the flush's, not the run's state
	grew := int64(liveHeap()) - int64(before)
	t.Logf("a run of %d items, all held and confirmed: %.1f MB, %.0f bytes an item", n, float64(grew)/1e6, float64(grew)/n)
	if per := grew / n; per > 80 {
		t.Errorf("%d bytes an item, want at most 80", per)
	}
	runtime.KeepAlive(r)
	runtime.KeepAlive(held)
}
