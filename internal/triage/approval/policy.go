package approval

import (
	"fmt"
	"time"
)

// Gated actions: the ones the policy may ask a second person for.
const (
	GateReplay  = "replay"
	GateDiscard = "discard"
	GateEdit    = "edit"
	GateReveal  = "reveal"
)

// Gates are the action names an approvals section may hold.
var Gates = []string{GateReplay, GateDiscard, GateEdit, GateReveal}

// Threshold says an action needs approval when it touches at least
// MinMessages messages (0 or 1: always).
type Threshold struct {
	MinMessages int
}

// Policy maps a gated action to its threshold; an action not in it runs
// on one person's --yes.
type Policy map[string]Threshold

// Needs reports whether doing action on count messages needs a proposal.
func (p Policy) Needs(action string, count int) bool {
	t, ok := p[action]
	return ok && count > 0 && count >= t.MinMessages
}

// Describe says why, for the printed proposal.
func (p Policy) Describe(action string) string {
	t := p[action]
	if t.MinMessages <= 1 {
		return fmt.Sprintf("approvals.%s: every %s needs a second person", action, action)
	}
	return fmt.Sprintf("approvals.%s: a %s of %d or more messages needs a second person", action, action, t.MinMessages)
}

// DefaultExpiry is how long a proposal waits for approval and a run.
const DefaultExpiry = 24 * time.Hour
