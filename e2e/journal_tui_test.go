package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/journal"
)

// The journal can be exported and verified while a TUI runs on it, and the
// journal screen exports it too, saying where the file went.
func TestJournalExportsBesideARunningTUIAndFromItsScreen(t *testing.T) {
	env, _ := seededJournal(t, 3)
	dir := t.TempDir()
	s := startTermIn(t, dir, 120, 40, env, "--demo")
	s.waitFor("DEMO data", "billing.parking")

	out := filepath.Join(t.TempDir(), "beside.jsonl")
	r := runDlqt(t, env, "journal", "export", "--out", out)
	if r.code != 0 || !strings.Contains(r.stderr, "exported 3 journal entries") {
		t.Fatalf("export beside the TUI: exit %d: %s", r.code, r.stderr)
	}
	if r := runDlqt(t, env, "journal", "verify"); r.code != 0 || !strings.Contains(r.stdout, "chain intact, entries 1-4 verified") {
		t.Fatalf("verify beside the TUI: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}

	// The TUI still writes (its export is entry 5, after the CLI's 4).
	s.keys("J")
	s.waitFor("export", "auditor")
	s.keys("E")
	scr := s.waitFor("exported 4 journal entries to " + dir)
	matches, _ := filepath.Glob(filepath.Join(dir, "dlqt-journal-*.jsonl"))
	if len(matches) != 1 {
		t.Fatalf("export files in the working directory: %v\n%s", matches, scr)
	}
	if r := runDlqt(t, env, "journal", "verify", "--file", matches[0]); r.code != 0 {
		t.Errorf("the screen's export does not verify: %s%s", r.stdout, r.stderr)
	}
	// Every entry this build wrote names it, as dlqt --version does.
	version := strings.TrimPrefix(strings.TrimSpace(runDlqt(t, env, "--version").stdout), "dlqt ")
	f, err := os.Open(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	es, err := journal.ReadJSONL(f)
	if err != nil || len(es) != 4 {
		t.Fatalf("the screen's export: %d entries, %v", len(es), err)
	}
	if version == "" || es[2].Version != "" || es[3].Version != version {
		t.Errorf("versions %q (seeded) and %q (the CLI's export); want none and %q", es[2].Version, es[3].Version, version)
	}
	if info, err := os.Stat(matches[0]); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("export file mode: %v %v", info, err)
	}
	s.keys("q")
	waitExit(t, s)
	if r := runDlqt(t, env, "journal", "verify"); r.code != 0 || !strings.Contains(r.stdout, "entries 1-5 verified") {
		t.Errorf("after the TUI: %s%s", r.stdout, r.stderr)
	}
}
