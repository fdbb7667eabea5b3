package triage

import (
	"fmt"
	"testing"
)

// TestSelectionMatcherAgreesWithMatches: the set the matcher builds for
// many ids selects exactly what Matches selects, with a group and without.
func TestSelectionMatcherAgreesWithMatches(t *testing.T) {
	var ids []string
	for i := range 100 {
		ids = append(ids, fmt.Sprintf("m-%d", i*3))
	}
	key := GroupKey{Reason: ReasonRejected, Code: "TIMEOUT"}
	for _, sel := range []Selection{{IDs: ids}, {IDs: ids, Group: &key}, {Group: &key}, {IDs: ids[:3]}} {
		selected := sel.Matcher()
		n := 0
		for i := range 400 {
			m := Triaged{ID: fmt.Sprintf("m-%d", i), Reason: ReasonRejected, ReasonCode: "TIMEOUT"}
			if i%2 == 1 {
				m.ReasonCode = "OTHER"
			}
			if got, want := selected(m), sel.Matches(m); got != want {
				t.Fatalf("%s: the matcher says %v of %s, Matches %v", sel, got, m.ID, want)
			} else if got {
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s selects nothing: the case proves nothing", sel)
		}
	}
}
