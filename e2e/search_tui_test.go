package e2e

import "testing"

// TestTUIFilterOfAGroupEndsWithTheExactCount: typed into the filter of a
// group of 10,000 messages (more than a key searches in its own Update),
// the search goes on in steps of the real program and ends with the exact
// count and the matches on screen.
func TestTUIFilterOfAGroupEndsWithTheExactCount(t *testing.T) {
	snap := deepSnapshot(t, 10_000)
	s := startTerm(t, 120, 30, isolatedEnv(t), "--snapshot", snap)
	s.waitFor("orders.parking", "bulk.parking")
	s.keys("Down")
	s.waitFor("orders.parking: ")
	s.keys("Enter")
	s.waitFor("10,000 of 100,000 messages")
	s.keys("Enter")
	s.waitFor("ord-000000")
	s.keys("/")
	s.typeText("ord-0099")
	s.waitFor("(100 of 10,000)", "› ", "ord-009900")
	s.keys("BSpace", "BSpace") // "ord-00": 100 times as many, searched again
	s.waitFor("(10,000 of 10,000)")
}
