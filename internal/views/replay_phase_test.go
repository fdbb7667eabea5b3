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
	r.SetPlan(replay.Plan{ID: "rp-1", Queue: "orders.parking", Items: replay.ItemsOf(replay.Item{ID: "m-30"})}, "ids", false)
	r.SetResult(replay.Result{ID: "rp-1", Untouched: 1, Changed: []string{"m-30"},
		Why: map[string]string{"m-30": "revision rev-1 was made from a body with sha256 aaa, the message now has bbb"}}, nil)
	if got := r.outcome(); !strings.Contains(got, "m-30 revision rev-1 was made from a body") {
		t.Errorf("outcome:\n%s", got)
	}
}

// A replay that ended and waits for the queue to apply its source acks
// says so on the gauge until the outcome is in, at 80 columns.
func TestGaugeSaysTheReplayWaitsForTheQueueToApplyItsAcks(t *testing.T) {
	r := NewReplay(testContext())
	r.SetSize(80, 24)
	r.SetPlan(replay.Plan{ID: "rp-1", Queue: "orders.parking", Items: replay.ItemsOf(replay.Item{ID: "m-1"})}, "ids", false)
	r.SetProgress(replay.Progress{Phase: replay.PhaseDone, Total: 1, Published: 1, Confirmed: 1, DestinationDepth: -1})
	if got := r.gauge(); strings.Contains(got, "source acks") {
		t.Errorf("a finished replay that waits for nothing:\n%s", got)
	}
	r.SetProgress(replay.Progress{Phase: replay.PhaseDone, Total: 1, Published: 1, Confirmed: 1, DestinationDepth: -1, SettlingAcks: 4000})
	if got := r.gauge(); !strings.Contains(got, "waiting for orders.parking to apply 4,000 source acks") ||
		!strings.Contains(got, "the broker is applying the source acks") || strings.Contains(got, "waiting for the last confirms") {
		t.Errorf("gauge while the queue applies the acks:\n%s", got)
	}
	r.SetResult(replay.Result{ID: "rp-1", Resolved: 1}, nil)
	if got := r.gauge(); strings.Contains(got, "source acks") {
		t.Errorf("the outcome is in, the wait is over:\n%s", got)
	}
}
