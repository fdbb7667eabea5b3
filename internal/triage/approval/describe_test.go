package approval

import (
	"strings"
	"testing"
	"time"
)

// TestDescribeSaysWhatAnApproverNeeds: every part of a proposal a person
// decides on is on a line of its own, text from the journal is sanitized,
// and the plan comes before the ids, which may be many.
func TestDescribeSaysWhatAnApproverNeeds(t *testing.T) {
	at := time.Date(2026, 12, 1, 23, 40, 0, 0, time.UTC)
	p := Proposal{ID: "p-1", Action: "replay", Vhost: "shop", Queue: "orders\x1b[2J.dlq", Proposer: "alice",
		ProposedAt: at.Add(-time.Hour), ExpiresAt: at.Add(time.Hour), MessageIDs: []string{"m-1", "m-2"},
		Teams: []string{"orders"}, Plan: Plan{Reason: "fixed\x07", To: "orders:created", Canary: 3, InOrder: true}}
	tests := []struct {
		name  string
		state State
		want  []string
		never []string
	}{
		{"pending", State{Proposal: p}, []string{
			`proposal p-1: replay 2 message(s) of orders\x1b[2J.dlq (vhost shop), pending`,
			"  owners: orders; may approve: carol",
			`  reason: fixed\x07`,
			"  plan canary: 3", "  plan in_order: true", "  plan to: orders:created",
		}, []string{"plan reason", "run by", "\x1b"}},
		{"run", State{Proposal: p, Decisions: []Decision{{Approve: true, By: "carol", At: at}}, RunBy: "bo", RunAt: at, Result: "2 replayed"},
			[]string{"  owners: orders; approved by carol at 2026-12-01T23:40:00Z", "  run by bo at 2026-12-01T23:40:00Z: 2 replayed"},
			[]string{"may approve"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lines := tc.state.Describe(at, []string{"carol"})
			text := strings.Join(lines, "\n")
			for _, w := range tc.want {
				if !contains(lines, w) {
					t.Errorf("no line %q in\n%s", w, text)
				}
			}
			for _, n := range tc.never {
				if strings.Contains(text, n) {
					t.Errorf("%q in\n%s", n, text)
				}
			}
			if plan, id := index(lines, "  plan canary: 3"), index(lines, "  m-1"); plan < 0 || id < plan || lines[len(lines)-1] != "  m-2" {
				t.Errorf("the plan (line %d) comes before the ids (line %d), the ids last:\n%s", plan, id, text)
			}
		})
	}
}

func contains(lines []string, l string) bool { return index(lines, l) >= 0 }

func index(lines []string, l string) int {
	for i, x := range lines {
		if x == l {
			return i
		}
	}
	return -1
}
