package broker

import "testing"

// TestExtraCopiesRemovesOnlyTheSecondOfAPair: a message marked by an
// interrupted scan and a redelivered one without that mark, of one key
// the scan journaled, are one message twice, in either order; the second
// of the two is removed. The only copy of a message whose original was
// acked, a key not journaled and a fresh (not redelivered) message are
// kept; an original may carry an older scan's mark; identical keys pair
// one for one.
func TestExtraCopiesRemovesOnlyTheSecondOfAPair(t *testing.T) {
	x := newExtraCopies([]InterruptedScan{{ScanID: "fs-a",
		IDs:      []string{"m1", "m2", "m3", "m3", "m5", "m6"},
		Contents: []string{"c1", "c2", "c3", "c3", "c5", "c6"}}})
	steps := []struct {
		key, mark   string
		redelivered bool
		extra       bool
	}{
		{"m1 c1", "fs-old", true, false}, // m1's original, back after the interruption
		{"m3 c3", "", true, false},       // one of two identical m3 originals
		{"m4 c4", "", true, false},       // not in the interrupted scan's windows
		{"m5 c5", "", false, false},      // not redelivered: arrived later, not an original
		{"m6 c6", "fs-a", false, false},  // m6's copy, before its original
		{"m2 c2", "fs-a", false, false},  // the only copy: m2's original was acked
		{"m1 cX", "fs-a", false, false},  // m1's id with other content: another message
		{"m1 c1", "fs-a", false, true},   // m1's extra copy
		{"m1 c1", "fs-a", false, false},  // a second m1 copy has no original left to pair with
		{"m3 c3", "fs-a", false, true},   // pairs with the one m3 original
		{"m3 c3", "fs-a", false, false},  // the other m3 original was acked: the only copy
		{"m4 c4", "fs-a", false, false},  // not journaled
		{"m5 c5", "fs-a", false, false},  // its original was not redelivered
		{"m6 c6", "", true, true},        // m6's original, after its copy: the second of the pair
		{"m2 c2", "fs-b", false, false},  // another scan's copy of m2, not redelivered: not an original of fs-a
		{"m2 c2", "fs-b", true, true},    // redelivered: m2's original (an older scan's copy) whose ack was lost
	}
	for i, s := range steps {
		if got := x.extra(s.key, s.mark, s.redelivered); got != s.extra {
			t.Fatalf("step %d (%s marked %q, redelivered %v): extra %v, want %v", i, s.key, s.mark, s.redelivered, got, s.extra)
		}
	}
}
