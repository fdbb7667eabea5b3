package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/demo"
	"github.com/dlqt/dlqt/internal/triage"
)

// openLeg0005 walks the demo to the legacy log line that carries a password
// and escape sequences, through a field filter on the groups screen.
func openLeg0005(s *term) string {
	s.waitFor("DEMO data", "legacy.events.failed")
	s.keys("/")
	s.typeText("legacy")
	s.keys("Enter")
	s.waitGone("billing.parking")
	s.keys("Enter")
	s.waitFor("legacy.events.failed (")
	s.keys("/")
	s.typeText("text~importer")
	s.keys("Enter")
	s.waitFor("filtered: 1 of")
	s.keys("Enter")
	s.waitFor("1 message")
	s.keys("Enter")
	return s.waitFor("message leg-0005")
}

// Reveal in a real terminal: it asks, journals, shows the password in clear
// with every escape still neutralised, and hides it when the user leaves.
func TestTUIRevealJournalsThenShowsAndHidesOnLeaving(t *testing.T) {
	journalPath := filepath.Join(t.TempDir(), "journal.db")
	s := startTerm(t, 120, 40, isolatedEnv(t), "--demo", "--journal", journalPath, "--actor", "ana@bastion")
	clear := "password=" + demo.ScenarioSecret[:8] // the line wraps inside the secret
	scr := openLeg0005(s)
	if strings.Contains(scr, clear) {
		t.Fatalf("the password shows before any reveal:\n%s", scr)
	}
	s.keys("v")
	s.waitFor("Reveal the unredacted payload?", "ana@bastion")
	s.keys("y")
	scr = s.waitFor("REVEALED (journal #1)", clear, "revealed)")
	if strings.Contains(scr, "value redacted)") || strings.Contains(scr, "values redacted)") {
		t.Errorf("a revealed payload still counts redacted values:\n%s", scr)
	}
	if strings.ContainsAny(scr, "\x1b\x07") || strings.Contains(s.title(), "pwned") {
		t.Fatalf("a revealed payload's escape reached the terminal:\n%q", scr)
	}
	s.keys("Escape")
	s.waitGone("REVEALED")
	s.keys("Enter")
	scr = s.waitFor("message leg-0005", "password=[REDACTED")
	if strings.Contains(scr, clear) {
		t.Fatalf("the password is still clear after leaving and coming back:\n%s", scr)
	}
	s.keys("q")
	waitExit(t, s)

	es := journalEntries(t, journalPath)
	var found bool
	for _, e := range es {
		if e.Action == triage.ActionReveal {
			found = true
			if e.Actor != "ana@bastion" || e.Queue != "legacy.events.failed" || len(e.MessageIDs) != 1 || e.MessageIDs[0] != "leg-0005" {
				t.Errorf("reveal entry %+v", e)
			}
		}
	}
	if !found {
		t.Fatalf("no reveal entry in the journal: %+v", es)
	}
}

// --read-only in a real terminal: reveal, discard and replay are not in the
// help, and their keys only say read-only mode.
func TestTUIReadOnlyDropsRevealDiscardAndReplay(t *testing.T) {
	s := startTerm(t, 120, 40, isolatedEnv(t), "--demo", "--read-only", "--journal", filepath.Join(t.TempDir(), "j.db"))
	openLeg0005(s)
	s.keys("?")
	scr := s.waitFor("? = unknown", "page down") // the full help, not the short line
	for _, gone := range []string{"reveal", "discard", "replay"} {
		if strings.Contains(scr, " "+gone) {
			t.Errorf("help lists %q in read-only mode:\n%s", gone, scr)
		}
	}
	for _, k := range []string{"v", "x", "R"} {
		s.keys(k)
		s.waitFor("read-only mode: discard, replay and reveal are off")
		s.keys("j") // the hint lasts until the next key
		s.waitGone("read-only mode: discard")
	}
	if scr := s.screen(); strings.Contains(scr, "password="+demo.ScenarioSecret[:8]) || strings.Contains(scr, "Reveal the unredacted") {
		t.Fatalf("read-only mode revealed:\n%s", scr)
	}
}
