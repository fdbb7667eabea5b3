package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

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

// An entry changed in place is found by the whole check the TUI runs after
// its first screen: the screen comes first, then the damage on the status
// line and, in one line, in every refusal; no entry is added to it.
func TestTUIChecksItsJournalAfterTheFirstScreenAndRefusesADamagedOne(t *testing.T) {
	env, path := seededJournal(t, 5)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("entries"))
		key := []byte{0, 0, 0, 0, 0, 0, 0, 3}
		changed := strings.Replace(string(b.Get(key)), "entry 2,", "entry 9,", 1)
		return b.Put(key, []byte(changed))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	s := startTerm(t, 120, 40, env, "--demo")
	s.waitFor("DEMO data", "billing.parking", "JOURNAL DAMAGED: actions off")
	s.keys("Enter")
	s.waitFor("reason_code")
	s.keys("Enter")
	s.keys("t")
	s.waitFor("tagging is off: journal /", "journal chain broken at entry 3", "will not use it") // the line breaks at the width
	s.keys("J")
	s.waitFor("error: journal: journal /", "journal chain broken at entry 3")
	s.keys("q")
	waitExit(t, s)
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket([]byte("entries")).Stats().KeyN; n != 5 {
			t.Errorf("the damaged journal holds %d entries after the TUI, want its 5", n)
		}
		return nil
	})
}
