package replay

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// State is one replay as the journal tells it: its plan, how far it
// got and each message's outcome so far.
type State struct {
	ID        string
	Vhost     string
	Queue     string
	Actor     string
	Plan      Plan
	StartedAt time.Time
	LastAt    time.Time // the replay's latest entry
	// Status is the last lifecycle action: replay-plan, replay-start,
	// replay-pause, replay-resume, replay-ramp, replay-stop, replay-abort or
	// replay-finish.
	Status triage.Action
	// Outcomes holds each message's latest journalled outcome: confirmed
	// (its source may not be acked yet), failed-again, returned, untouched.
	Outcomes map[string]Outcome
	// Collateral are messages that were not replayed but were dead
	// lettered from a destination queue while it ran.
	Collateral   []string
	CanaryPassed bool
	Ended        bool // a finish entry was written
}

// Interrupted reports a replay that started and never finished: dlqt
// crashed or was killed in the middle of it.
func (s State) Interrupted() bool {
	return !s.StartedAt.IsZero() && !s.Ended
}

// Counts tallies the outcomes so far by kind.
func (s State) Counts() map[Outcome]int {
	out := map[Outcome]int{}
	for _, o := range s.Outcomes {
		out[o]++
	}
	return out
}

// ResumePlan is the plan with Prior set from the outcomes so far, for
// Run to finish it: confirmed messages are acked, never
// published again; resolved (acked), failed-again and returned ones are
// left where they are;
// the rest is published, untouched ones included, since an untouched
// message was put back unpublished. A message published but not yet
// confirmed when dlqt died (its latest outcome is published) is published
// again and named in Prior.Published: a duplicate is possible.
func (s State) ResumePlan() Plan {
	p := s.Plan
	prior := &Prior{Settled: map[string]Outcome{}, CanaryPassed: s.CanaryPassed}
	for _, it := range p.Items.All() {
		switch o := s.Outcomes[it.ID]; o {
		case OutcomeConfirmed:
			prior.Confirmed = append(prior.Confirmed, it.ID)
		case OutcomePublished:
			prior.Published = append(prior.Published, it.ID)
		case OutcomeResolved, OutcomeFailedAgain, OutcomeReturned:
			prior.Settled[it.ID] = o
		}
	}
	p.Prior = prior
	p.Selecting = false // what it took is known: a resume takes no other message
	return p
}

// Journal is where a replay's state is read back from (internal/journal
// implements it): every record in the order written, and where it lives,
// for the messages.
type Journal interface {
	Records() ([]triage.Recorded, error)
	Path() string
}

// IndexedJournal finds a replay's records without reading every entry
// (internal/journal keeps an index of them).
type IndexedJournal interface {
	Journal
	// OpenReplays are the ids of the replays started and never finished,
	// in the order they were planned.
	OpenReplays() ([]string, error)
	// ReplayRecords are the records of one replay, in order.
	ReplayRecords(id string) ([]triage.Recorded, error)
}

// Find reads one replay's state; an unknown id wraps triage.ErrNotFound.
func Find(j Journal, id string) (State, error) {
	if ij, ok := j.(IndexedJournal); ok {
		rs, err := ij.ReplayRecords(id)
		if err != nil {
			return State{}, err
		}
		if states, err := fold(j, rs); err != nil || len(states) == 1 {
			return firstState(states), err
		}
		return State{}, fmt.Errorf("replay %q: %w in journal %s", id, triage.ErrNotFound, j.Path())
	}
	states, err := States(j)
	if err != nil {
		return State{}, err
	}
	for _, s := range states {
		if s.ID == id {
			return s, nil
		}
	}
	return State{}, fmt.Errorf("replay %q: %w in journal %s", id, triage.ErrNotFound, j.Path())
}

func firstState(states []State) State {
	if len(states) == 0 {
		return State{}
	}
	return states[0]
}

// Interrupted lists the replays that started and never finished, oldest
// first: the TUI's banner and `dlqt replay --resume`. Through an indexed
// journal it reads only those replays' entries.
func Interrupted(j Journal) ([]State, error) {
	var states []State
	var err error
	if ij, ok := j.(IndexedJournal); ok {
		states, err = openStates(ij)
	} else {
		states, err = States(j)
	}
	if err != nil {
		return nil, err
	}
	var out []State
	for _, s := range states {
		if s.Interrupted() {
			out = append(out, s)
		}
	}
	return out, nil
}

// openStates folds the replays the index says are open.
func openStates(j IndexedJournal) ([]State, error) {
	ids, err := j.OpenReplays()
	if err != nil {
		return nil, err
	}
	var out []State
	for _, id := range ids {
		rs, err := j.ReplayRecords(id)
		if err != nil {
			return nil, err
		}
		states, err := fold(j, rs)
		if err != nil {
			return nil, err
		}
		out = append(out, states...)
	}
	return out, nil
}

// States folds every replay record of j into one state per replay id, in
// the order the replays were planned.
func States(j Journal) ([]State, error) {
	es, err := j.Records()
	if err != nil {
		return nil, err
	}
	return fold(j, es)
}

// fold folds records into one state per replay id, in the order the
// replays were planned; records of no replay are passed over.
func fold(j Journal, es []triage.Recorded) ([]State, error) {
	byID := map[string]*State{}
	var order []string
	for _, e := range es {
		id, _ := e.Details["replay_id"].(string)
		if id == "" || !e.Action.IsReplay() {
			continue
		}
		s := byID[id]
		if s == nil {
			s = &State{ID: id, Vhost: e.Vhost, Queue: e.Queue, Actor: e.Actor, Outcomes: map[string]Outcome{}}
			byID[id] = s
			order = append(order, id)
		}
		if err := s.apply(e); err != nil {
			return nil, fmt.Errorf("journal %s: entry %d: %w", j.Path(), e.Seq, err)
		}
	}
	out := make([]State, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out, nil
}

func (s *State) apply(e triage.Recorded) error {
	s.LastAt = e.Time
	switch e.Action {
	case triage.ActionReplayPlan:
		raw, err := json.Marshal(e.Details["plan"])
		if err != nil {
			return err
		}
		var rec planRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return fmt.Errorf("replay plan: %w", err)
		}
		if s.Plan, err = rec.plan(e.MessageIDs); err != nil {
			return err
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
		o := Outcome(e.Reason)
		if o == OutcomeCollateral { // not the replay's messages
			s.Collateral = append(s.Collateral, e.MessageIDs...)
			return nil
		}
		for _, id := range e.MessageIDs {
			if _, known := s.Outcomes[id]; !known && s.Plan.Selecting && s.Plan.Options.To != nil {
				// A selecting replay's message is journalled first as it
				// is published (or left): that makes it one of the plan's.
				s.Plan.Items.Append(Item{ID: id, Route: *s.Plan.Options.To})
			}
			// failed-again is final, whatever the order of the entries;
			// untouched after confirmed cannot happen (settled ids are skipped).
			if s.Outcomes[id] == OutcomeFailedAgain {
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
