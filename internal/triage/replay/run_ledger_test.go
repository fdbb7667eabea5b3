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

// A run keeps of each of its plan's items two bytes, and four to find it
// by its id: held and confirmed, a million items cost it 6.0 MB. Its maps
// of every id (the items again, held, outcome, confirmed, acked) took
// 413.2 MB in this test (in a profile of a replay of 1,000,000 they were
// 225 MB of its heap); one map from id to index, 57.9 MB.
func TestARunOfAMillionKeepsAFewBytesAnItem(t *testing.T) {
	if testing.Short() {
		t.Skip("a million items")
	}
	const n = 1000000
	plan := Plan{ID: "rp-million", Queue: "q", Options: Options{Rate: 1}.withDefaults(), Allowed: true}
	plan.Items.Grow(n)
	held := make([]HeldMessage, n)
	sum := triage.BodySHA256(fakeBody)
	for i := range n {
		id := fmt.Sprintf("m-%07d", i)
		plan.Items.Append(Item{ID: id, Route: triage.Route{Exchange: "orders", RoutingKey: "order.created"}})
		held[i] = HeldMessage{ID: id, BodySHA256: sum}
	}
	before := liveHeap()
	r := newRun(plan, Runner{Journal: &journalSpy{}})
	r.sortHeld(held, map[string]string{})
	for _, it := range plan.Items.All() { // every copy confirmed, as before its ack
		r.settled(confirmResult{id: it.ID, res: PublishResult{Confirmed: true}})
	}
	r.toConfirm = nil // the flush's, not the run's state
	grew := int64(liveHeap()) - int64(before)
	t.Logf("a run of %d items, all held and confirmed: %.1f MB, %.0f bytes an item", n, float64(grew)/1e6, float64(grew)/n)
	if per := grew / n; per > 16 {
		t.Errorf("%d bytes an item, want at most 16", per)
	}

	// Its result keeps a code an item, not a map of every id (83.7 bytes an
	// item in this test).
	before = liveHeap()
	res := r.result()
	grew = int64(liveHeap()) - int64(before)
	t.Logf("its result: %.1f MB, %.1f bytes an item", float64(grew)/1e6, float64(grew)/n)
	if per := grew / n; per > 2 {
		t.Errorf("the result takes %d bytes an item, want at most 2", per)
	}
	if res.Resolved != n || res.Outcome(plan.Items.ID(n-1)) != OutcomeResolved || res.Outcome("m-absent") != "" {
		t.Errorf("result: resolved %d, last %q, absent %q", res.Resolved, res.Outcome(plan.Items.ID(n-1)), res.Outcome("m-absent"))
	}
	runtime.KeepAlive(r)
	runtime.KeepAlive(held)
	runtime.KeepAlive(res)
}

// A ledger finds each item by its id, and an id it does not plan it finds
// nowhere; of an id planned twice it keeps the last, as a map from id to
// index did.
func TestALedgerFindsItsItemsByID(t *testing.T) {
	items := []Item{{ID: "m-3"}, {ID: "m-1"}, {ID: "m-2"}, {ID: "m-1"}, {ID: ""}}
	l := newLedger(ItemsOf(items...))
	for _, tc := range []struct {
		id   string
		at   int32
		know bool
	}{{"m-1", 3, true}, {"m-2", 2, true}, {"m-3", 0, true}, {"", 4, true}, {"m-0", 0, false}, {"m-4", 0, false}, {"m-10", 0, false}} {
		at, ok := l.index(tc.id)
		if ok != tc.know || (ok && at != tc.at) {
			t.Errorf("index(%q) = %d, %t; want %d, %t", tc.id, at, ok, tc.at, tc.know)
		}
	}
	l.settle("m-2", OutcomeResolved)
	l.settle("m-9", OutcomeResolved)
	if !l.is("m-2", OutcomeResolved) || l.is("m-3", OutcomeResolved) || l.is("m-9", OutcomeResolved) {
		t.Errorf("outcomes %+v", l.st)
	}
}
