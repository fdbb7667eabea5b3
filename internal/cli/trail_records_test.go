package cli

import (
	"slices"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// A record any writer may publish must not replace a proposal nor make the
// team's proposals unreadable.
func TestFirstProposals(t *testing.T) {
	prop := func(seq uint64, id, inner string) triage.Recorded {
		return triage.Recorded{Seq: seq, Record: triage.Record{Action: triage.ActionProposal, Details: map[string]any{"proposal_id": id, "proposal": map[string]any{"id": inner}}}}
	}
	decide := func(seq uint64, id string) triage.Recorded {
		return triage.Recorded{Seq: seq, Record: triage.Record{Action: triage.ActionProposalApprove, Details: map[string]any{"proposal_id": id}}}
	}
	rs := []triage.Recorded{
		prop(1, "p-1", "p-1"),
		decide(2, "p-1"),
		prop(3, "p-1", "p-1"), // p-1 again: dropped
		decide(4, "p-9"),      // a decision of nothing proposed: dropped
		prop(5, "p-2", "p-1"), // says p-2, holds p-1: dropped
		{Seq: 6, Record: triage.Record{Action: triage.ActionTag}}, // not a proposal's: kept
	}
	var seqs []uint64
	for _, r := range firstProposals(rs) {
		seqs = append(seqs, r.Seq)
	}
	if want := []uint64{1, 2, 6}; !slices.Equal(seqs, want) {
		t.Fatalf("kept %v, want %v", seqs, want)
	}
}
