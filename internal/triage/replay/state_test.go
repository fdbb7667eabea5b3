package replay

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// memJournal is a journal in memory; its records go through JSON as the
// real one's do, so Details come back as maps and float64s.
type memJournal struct{ records []triage.Recorded }

func (m *memJournal) Path() string { return "mem.db" }

func (m *memJournal) Records() ([]triage.Recorded, error) { return m.records, nil }

func (m *memJournal) write(t *testing.T, action triage.Action, reason string, ids []string, details map[string]any) {
	t.Helper()
	raw, err := json.Marshal(details)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	m.records = append(m.records, triage.Recorded{Seq: uint64(len(m.records) + 1), Time: time.Unix(int64(len(m.records)), 0), Actor: "ops",
		Record: triage.Record{Action: action, Vhost: "v", Queue: "q", MessageIDs: ids, Reason: reason, Details: back}})
}

// A resume is decided from the records alone: failed-again stays final
// whatever comes after it, a resumed start opens the replay again, and a
// finish closes it.
func TestStatesFoldTheRecordsOfEachReplay(t *testing.T) {
	j := &memJournal{}
	plan := fakePlan(Options{Rate: 5}, "a", "b", "c")
	plan.ID = "rp-1"
	j.write(t, triage.ActionReplayPlan, "", plan.IDs(), map[string]any{"replay_id": "rp-1", "plan": plan})
	j.write(t, triage.ActionReplayStart, "", nil, map[string]any{"replay_id": "rp-1"})
	j.write(t, triage.ActionReplayOutcome, string(OutcomeFailedAgain), []string{"a"}, map[string]any{"replay_id": "rp-1"})
	j.write(t, triage.ActionReplayOutcome, string(OutcomeConfirmed), []string{"a", "b"}, map[string]any{"replay_id": "rp-1"})
	j.write(t, triage.ActionTag, "poison", []string{"c"}, nil) // not a replay's
	j.write(t, triage.ActionReplayFinish, "stopped: lost", nil, map[string]any{"replay_id": "rp-1"})
	if open, err := Interrupted(j); err != nil || len(open) != 0 {
		t.Fatalf("a finished replay reads as interrupted: %+v, %v", open, err)
	}
	j.write(t, triage.ActionReplayStart, "", nil, map[string]any{"replay_id": "rp-1", "resumed": true})
	s, err := Find(j, "rp-1")
	if err != nil || !s.Interrupted() || s.Status != triage.ActionReplayStart || s.Plan.Options.Rate != 5 {
		t.Fatalf("state %+v, %v", s, err)
	}
	p := s.ResumePlan()
	if !slices.Equal(p.Prior.Confirmed, []string{"b"}) || p.Prior.Settled["a"] != OutcomeFailedAgain || len(p.Prior.Settled) != 1 {
		t.Errorf("prior %+v", p.Prior)
	}
	if _, err := Find(j, "rp-2"); !errors.Is(err, triage.ErrNotFound) {
		t.Errorf("unknown replay: %v", err)
	}
}
