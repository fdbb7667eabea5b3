package cli

import (
	"errors"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

type keptBodies map[string][]byte

func (k keptBodies) RevisionBody(sum string) ([]byte, error) {
	if b, ok := k[sum]; ok {
		return b, nil
	}
	return nil, triage.ErrNotFound
}

// TestRevisionBodiesOfAResumedPlan: a journaled plan names its revisions'
// bodies by SHA-256 (read back from the store) or, written by an older
// dlqt, inline; a body the store lacks stops the resume.
func TestRevisionBodiesOfAResumedPlan(t *testing.T) {
	kept, inline := []byte(`{"a":2}`), []byte(`{"a":3}`)
	plan := replay.Plan{Items: replay.ItemsOf(
		replay.Item{ID: "m1", Revision: &replay.Revision{ID: "rev-1", SHA256: approval.SHA256(kept)}},
		replay.Item{ID: "m2", Revision: &replay.Revision{ID: "rev-0", Inline: inline}},
		replay.Item{ID: "m3"},
	)}
	if err := revisionBodies(keptBodies{approval.SHA256(kept): kept}, &plan); err != nil {
		t.Fatal(err)
	}
	if r := plan.Items.At(0).Revision; string(r.Body) != string(kept) {
		t.Errorf("kept apart: %+v", r)
	}
	if r := plan.Items.At(1).Revision; string(r.Body) != string(inline) || r.SHA256 != approval.SHA256(inline) {
		t.Errorf("inline: %+v", r)
	}
	if plan.Items.At(2).Revision != nil {
		t.Errorf("an item without a revision got %+v", plan.Items.At(2).Revision)
	}
	lost := replay.Plan{Items: replay.ItemsOf(replay.Item{ID: "m1", Revision: &replay.Revision{ID: "rev-1", SHA256: approval.SHA256(kept)}})}
	if err := revisionBodies(keptBodies{}, &lost); !errors.Is(err, triage.ErrNotFound) {
		t.Errorf("a body the store lacks: %v", err)
	}
}
