package journal

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// The journal gives a replay back its state: the records it wrote, read
// from the file, rebuild the plan and the outcomes so far.
func TestReplayStateFromTheJournal(t *testing.T) {
	j, err := Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	rec := NewRecorder(j, "ops@bastion", "bastion")
	to := triage.Route{Exchange: "orders", RoutingKey: "order.created"}
	plan := replay.Plan{ID: "rp-1", Vhost: "v", Queue: "orders.parking",
		Items:   replay.ItemsOf(replay.Item{ID: "a", Route: to, Original: true}, replay.Item{ID: "b", Route: to}, replay.Item{ID: "c", Route: to}, replay.Item{ID: "d", Route: to}),
		Options: replay.Options{Rate: 50, Canary: 2, Observe: 3 * time.Second, Allow: []string{"orders:*"}},
	}
	write := func(action triage.Action, reason string, ids []string, details map[string]any) {
		t.Helper()
		d := map[string]any{"replay_id": "rp-1"}
		for k, v := range details {
			d[k] = v
		}
		if err := rec.Record(triage.Record{Action: action, Vhost: "v", Queue: "orders.parking", MessageIDs: ids, Reason: reason, Details: d}); err != nil {
			t.Fatal(err)
		}
	}
	write(triage.ActionReplayPlan, "", plan.IDs(), map[string]any{"plan": plan})
	write(triage.ActionReplayStart, "", nil, nil)
	write(triage.ActionReplayOutcome, string(replay.OutcomeConfirmed), []string{"a", "b"}, nil)
	write(triage.ActionReplayOutcome, string(replay.OutcomeFailedAgain), []string{"b"}, nil)
	write(triage.ActionReplayRamp, "", nil, map[string]any{"rate": 50, "canary_passed": true})
	write(triage.ActionReplayOutcome, string(replay.OutcomeReturned), []string{"c"}, map[string]any{"why": map[string]any{"c": "NO_ROUTE"}})
	if _, err := j.Append(Entry{Action: triage.ActionTag, Reason: "poison", MessageIDs: []string{"a"}}); err != nil {
		t.Fatal(err) // other actions in between are not part of the replay
	}

	open, err := replay.Interrupted(j)
	if err != nil || len(open) != 1 {
		t.Fatalf("interrupted = %+v, %v", open, err)
	}
	s := open[0]
	if s.ID != "rp-1" || s.Queue != "orders.parking" || s.Vhost != "v" || s.Actor != "ops@bastion" || !s.CanaryPassed || s.Status != triage.ActionReplayRamp {
		t.Errorf("state %+v", s)
	}
	if s.Plan.Options.Observe != 3*time.Second || s.Plan.Items.At(0).Route != to || !s.Plan.Items.At(0).Original || len(s.Plan.Options.Allow) != 1 {
		t.Errorf("plan did not round-trip: %+v", s.Plan)
	}
	p := s.ResumePlan()
	if p.Prior == nil || !slices.Equal(p.Prior.Confirmed, []string{"a"}) || !p.Prior.CanaryPassed {
		t.Fatalf("prior %+v", p.Prior)
	}
	if p.Prior.Settled["b"] != replay.OutcomeFailedAgain || p.Prior.Settled["c"] != replay.OutcomeReturned || len(p.Prior.Settled) != 2 {
		t.Errorf("settled %v", p.Prior.Settled)
	}

	write(triage.ActionReplayFinish, "done", nil, nil)
	if open, _ := replay.Interrupted(j); len(open) != 0 {
		t.Errorf("finished replay still interrupted: %+v", open)
	}
	if s, err := replay.Find(j, "rp-1"); err != nil || !s.Ended || s.Interrupted() {
		t.Errorf("Replay(rp-1) = %+v, %v", s, err)
	}
	if _, err := replay.Find(j, "rp-none"); !errors.Is(err, triage.ErrNotFound) {
		t.Errorf("unknown replay: %v", err)
	}
	if err := j.Verify(); err != nil {
		t.Errorf("verify: %v", err)
	}
}
