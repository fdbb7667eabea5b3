package views

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// A browse stopped by an undecodable message says where it stopped and
// how to get past it, on the groups header and the status line.
func TestBoundNamesUnreadable(t *testing.T) {
	b := triage.Batch{Depth: 11, Messages: make([]triage.Message, 5),
		Unreadable: &triage.Unreadable{Position: 5, MessageID: "poison", Reason: "headers nested 40 deep"}}
	got := Bound(b)
	for _, want := range []string{"first 5 of 11", "position 5", "dlqt quarantine"} {
		if !strings.Contains(got, want) {
			t.Errorf("Bound = %q, want it to say %q", got, want)
		}
	}
}
