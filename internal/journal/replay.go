package journal

import (
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
	// Status is the last lifecycle action: planned, started, paused,
	// resumed, ramped, stopped, aborted or finished.
	Status       string
	Outcomes     map[string]triage.ReplayOutcome // confirmed, failed-again, returned, untouched
	CanaryPassed bool
}

// Interrupted reports a replay that started and never ended (stop, abort
// or finish): dlqt crashed or was killed in the middle of it.
func (s ReplayState) Interrupted() bool {
	panic("not implemented")
}

// ResumePlan is the plan with Prior set from the outcomes so far, for
// triage.RunReplay to finish it: confirmed messages are acked, never
// published again; the rest is published (a duplicate is possible for a
// message published but not yet confirmed when dlqt died).
func (s ReplayState) ResumePlan() triage.ReplayPlan {
	panic("not implemented")
}

// Replay reads one replay's state; an unknown id wraps triage.ErrNotFound.
func (j *Journal) Replay(id string) (ReplayState, error) {
	panic("not implemented")
}

// InterruptedReplays lists the replays that started and never ended, oldest
// first: the TUI's banner and `dlqt replay --resume`.
func (j *Journal) InterruptedReplays() ([]ReplayState, error) {
	panic("not implemented")
}
