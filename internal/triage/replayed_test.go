package triage

import (
	"testing"
	"time"
)

// A replayed copy that died again, in the shapes each broker parks it in:
// the timeline shows every death exactly once.
func TestTimelineOfAReplayedCopyThatDiedAgain(t *testing.T) {
	first := mustTime("2026-01-02T03:04:05Z")
	replayed := first // replayed within the same second as its first death
	again := first    // and rejected again within it
	kept := []any{xdeath("orders.work", "rejected", 1, first, "orders", "order.created")}
	for _, c := range []struct {
		name   string
		xdeath Headers
		events int   // death events
		total  int64 // their counts summed
	}{
		// <= 3.12 keeps counting the republished entry: one entry, count 2.
		{"3.10", xdeath("orders.work", "rejected", 2, first, "orders", "order.created"), 1, 2},
		// 4.x restarts: a fresh entry, here even in the same second.
		{"4.x", xdeath("orders.work", "rejected", 1, again, "orders", "order.created"), 2, 2},
	} {
		replayedAt := replayed
		if c.name == "3.10" {
			// Kept and counted entries share their first time, which must be
			// before the replay (dlqt-replayed-at is in whole seconds).
			replayedAt = first.Add(time.Second)
		}
		h := Headers{"x-death": []any{c.xdeath}, hdrDeaths: kept, hdrReplayID: "rp-1", hdrReplayedAt: replayedAt}
		m := Message{Queue: "orders.parked", Headers: h}
		var n int
		var total int64
		for _, e := range timelineOf(m, Envelope{}, ParseDeaths(h)) {
			if e.Kind == EventDeath {
				n++
				total += e.Count
			}
		}
		if n != c.events || total != c.total {
			t.Errorf("%s: %d death events counting %d, want %d counting %d", c.name, n, total, c.events, c.total)
		}
	}
}
