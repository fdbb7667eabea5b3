package cli

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// TestCutShortSaysWhatAGroupsActionDidNotSee: a replay of a group or a
// filter over a read that a bound cut, or beside another reader that held
// part of the queue, ends "not read: …" (exit 4); one of named ids, or of
// a read that saw everything, does not. Before, a replay begun beside
// another reader's hold of 494,140 of 1,000,000 replayed the 505,860 it
// saw and exited 0.
func TestCutShortSaysWhatAGroupsActionDidNotSee(t *testing.T) {
	group := triage.Selection{Group: &triage.GroupKey{Reason: triage.ReasonPublished}}
	for _, c := range []struct {
		name  string
		sel   triage.Selection
		batch triage.Batch
		want  string // "" for no cut
	}{
		{"whole read", group, triage.Batch{Depth: 10, Read: 10}, ""},
		{"cut by the budget", group, triage.Batch{Depth: 10, Read: 4, Bound: "dlqt memory budget"}, "read only the first 4 of the 10 messages of q (dlqt memory budget)"},
		{"cut by --limit", group, triage.Batch{Depth: 10, Read: 4}, ""},
		{"held elsewhere", group, triage.Batch{Depth: 505860, Read: 505860, HeldElsewhere: 494140}, "read 505860 of the 1000000 messages of q: 494140 were held by another reader"},
		{"ids, held elsewhere", triage.Selection{IDs: []string{"a"}}, triage.Batch{Depth: 5, Read: 5, HeldElsewhere: 5}, ""},
	} {
		err := cutShort("replay rp-1", "q", c.sel, c.batch)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want no cut", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
