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
