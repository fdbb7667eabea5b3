package replay

import (
	"fmt"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// A plan made over a packed read keeps its items, not the read: the ids it
// kept were strings into the index's chunks, so the 30 MB index of a read
// of 300,000 stayed live through the whole replay (a heap profile at 80 s
// of it), and 96 MB of a million's. Kept as []Item, an item then took 142
// bytes (an 80-byte struct, its id's own allocation, its place); as Items,
// 70.
func TestAPlanLetsTheReadItWasMadeFromGo(t *testing.T) {
	const n = 100_000
	before := liveHeap()
	in := packedInspection(n)
	read := liveHeap() - before
	plan, err := NewPlan(in, triage.Selection{Group: &triage.GroupKey{Reason: triage.ReasonPublished}}, Options{To: &triage.Route{RoutingKey: "dest"}, Allow: []string{":dest"}})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Items.Len() != n {
		t.Fatalf("planned %d items, want %d", plan.Items.Len(), n)
	}
	kept := liveHeap() - before // in is not used again: the read may go
	// The items: an id (36 bytes packed, 16 to point at it), a route's
	// index (4) and a place in the read (4) each.
	if limit := uint64(n * 90); kept > limit {
		t.Errorf("the plan of %d keeps %.1f MB once its read (%.1f MB) is let go; want under %.1f MB", n, float64(kept)/1e6, float64(read)/1e6, float64(limit)/1e6)
	}
	t.Logf("read %.1f MB, plan kept %.1f MB (%d bytes an item)", float64(read)/1e6, float64(kept)/1e6, kept/n)
	if plan.Items.At(n-1).ID != fmt.Sprintf("%036d", n-1) {
		t.Errorf("last item %q", plan.Items.At(n-1).ID)
	}
}

// packedInspection is a read of n parked messages kept as the headless
// read keeps them: a packed index.
func packedInspection(n int) triage.Inspection {
	top := replayTopology()
	x := triage.NewIndex(n)
	for i := range n {
		m := parkedMsg(fmt.Sprintf("%036d", i), triage.Headers{"x-original-exchange": "ledger", "x-original-routingKey": "entry.posted"}, `{}`)
		m.Position = i
		m.Body = nil
		m.Properties.CorrelationID = fmt.Sprintf("corr-%059d", i) // an entry of about the size make bench's are

		ts := triage.Analyze(triage.Batch{Vhost: "v", Queue: "orders.parking", Messages: []triage.Message{m}}, top, nil)
		x.Append(&ts[0])
	}
	return triage.Inspection{Batch: triage.Batch{Vhost: "v", Queue: "orders.parking", Depth: n}, Topology: top, Entries: x}
}
