package journal

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// ReplayState is one replay as the journal tells it: its plan, how far it
// got and each message's outcome so far.
type ReplayState struct {
	ID        string
	Vhost     string
	Queue     string
	Actor     string
	Plan      triage.ReplayPlan
	StartedAt time.Time
	LastAt    time.Time // the replay's latest entry
	// Status is the last lifecycle action: replay-plan, replay-start,
	// replay-pause, replay-resume, replay-ramp, replay-stop, replay-abort or
	// replay-finish.
	Status triage.Action
	// Outcomes holds each message's latest journalled outcome: confirmed
	// (its source may not be acked yet), failed-again, returned, untouched.
	Outcomes     map[string]triage.ReplayOutcome
	CanaryPassed bool
	Ended        bool // a finish entry was written
}

// Interrupted reports a replay that started and never finished: dlqt
// crashed or was killed in the middle of it.
func (s ReplayState) Interrupted() bool {
	return !s.StartedAt.IsZero() && !s.Ended
}

// Counts tallies the outcomes so far by kind.
func (s ReplayState) Counts() map[triage.ReplayOutcome]int {
	out := map[triage.ReplayOutcome]int{}
	for _, o := range s.Outcomes {
		out[o]++
	}
	return out
}

// ResumePlan is the plan with Prior set from the outcomes so far, for
// triage.RunReplay to finish it: confirmed messages are acked, never
// published again; failed-again and returned ones are left where they are;
// the rest is published, untouched ones included, since an untouched
// message was put back unpublished. A message published but not yet
// confirmed when dlqt died is published again: a duplicate is possible.
func (s ReplayState) ResumePlan() triage.ReplayPlan {
	p := s.Plan
	prior := &triage.ReplayPrior{Settled: map[string]triage.ReplayOutcome{}, CanaryPassed: s.CanaryPassed}
	for _, it := range p.Items {
		switch o := s.Outcomes[it.ID]; o {
		case triage.OutcomeConfirmed:
			prior.Confirmed = append(prior.Confirmed, it.ID)
		case triage.OutcomeFailedAgain, triage.OutcomeReturned:
			prior.Settled[it.ID] = o
		}
	}
	p.Prior = prior
	return p
}

// Replay reads one replay's state; an unknown id wraps triage.ErrNotFound.
func (j *Journal) Replay(id string) (ReplayState, error) {
	states, err := j.replays()
	if err != nil {
		return ReplayState{}, err
	}
	for _, s := range states {
		if s.ID == id {
			return s, nil
		}
	}
	return ReplayState{}, fmt.Errorf("replay %q: %w in journal %s", id, triage.ErrNotFound, j.path)
}

// InterruptedReplays lists the replays that started and never finished,
// oldest first: the TUI's banner and `dlqt replay --resume`.
func (j *Journal) InterruptedReplays() ([]ReplayState, error) {
	states, err := j.replays()
	if err != nil {
		return nil, err
	}
	var out []ReplayState
	for _, s := range states {
		if s.Interrupted() {
			out = append(out, s)
		}
	}
	return out, nil
}

// replays folds every replay entry into one state per replay id, in the
// order the replays were planned.
func (j *Journal) replays() ([]ReplayState, error) {
	es, err := j.Entries()
	if err != nil {
		return nil, err
	}
	byID := map[string]*ReplayState{}
	var order []string
	for _, e := range es {
		id, _ := e.Details["replay_id"].(string)
		if id == "" || !e.Action.IsReplay() {
			continue
		}
		s := byID[id]
		if s == nil {
			s = &ReplayState{ID: id, Vhost: e.Vhost, Queue: e.Queue, Actor: e.Actor, Outcomes: map[string]triage.ReplayOutcome{}}
			byID[id] = s
			order = append(order, id)
		}
		if err := s.apply(e); err != nil {
			return nil, fmt.Errorf("journal %s: entry %d: %w", j.path, e.Seq, err)
		}
	}
	out := make([]ReplayState, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out, nil
}

func (s *ReplayState) apply(e Entry) error {
	s.LastAt = e.Time
	switch e.Action {
	case triage.ActionReplayPlan:
		raw, err := json.Marshal(e.Details["plan"])
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &s.Plan); err != nil {
			return fmt.Errorf("replay plan: %w", err)
		}
	case triage.ActionReplayStart:
		if s.StartedAt.IsZero() {
			s.StartedAt = e.Time
		}
		s.Ended = false // a resumed replay runs again
	case triage.ActionReplayRamp:
		if passed, _ := e.Details["canary_passed"].(bool); passed {
			s.CanaryPassed = true
		}
	case triage.ActionReplayFinish:
		s.Ended = true
	case triage.ActionReplayOutcome:
		o := triage.ReplayOutcome(e.Reason)
		for _, id := range e.MessageIDs {
			// failed-again is final, whatever the order of the entries;
			// untouched after confirmed cannot happen (settled ids are skipped).
			if s.Outcomes[id] == triage.OutcomeFailedAgain {
				continue
			}
			s.Outcomes[id] = o
		}
		return nil
	}
	if e.Action != triage.ActionReplayOutcome {
		s.Status = e.Action
	}
	return nil
}
