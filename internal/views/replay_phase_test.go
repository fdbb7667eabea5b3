package views

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage/replay"
)

// A replay counting its destination's baseline says so, rather than
// "STARTING" (a resumed command-line plan carries a baseline into the TUI).
func TestPhaseTextNamesTheBaseline(t *testing.T) {
	got := PhaseText(replay.Progress{Phase: replay.PhaseBaseline}, testContext().Keys)
	if !strings.HasPrefix(got, "BASELINE") || !strings.Contains(got, "nothing sent yet") {
		t.Errorf("baseline phase: %q", got)
	}
}

// A message left untouched because its body changed since the decision
// (a stale revision) is named with why in the outcome, not only counted.
func TestOutcomeNamesAChangedMessage(t *testing.T) {
	r := NewReplay(testContext())
	r.SetPlan(replay.Plan{ID: "rp-1", Queue: "orders.parking", Items: []replay.Item{{ID: "m-30"}}}, "ids", false)
	r.SetResult(replay.Result{ID: "rp-1", Untouched: 1, Changed: []string{"m-30"},
		Why: map[string]string{"m-30": "revision rev-1 was made from a body with sha256 aaa, the message now has bbb"}}, nil)
	if got := r.outcome(); !strings.Contains(got, "m-30 revision rev-1 was made from a body") {
		t.Errorf("outcome:\n%s", got)
	}
}
