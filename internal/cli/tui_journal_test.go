package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/access"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/serve"
	"github.com/dlqt/dlqt/internal/ui"
)

// The TUI's journal opens without its whole check, which the TUI runs
// (ui.JournalVerifier); nothing is appended before it passed. A journal
// whose head file tells it was cut short is still refused at the open.
func TestTUIJournalOpensUncheckedAndAppendsAfterItsCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	a := &app{journalPath: path}
	j, err := a.openTUIJournal()
	if err != nil {
		t.Fatal(err)
	}
	var v ui.JournalVerifier = j
	if v.Verified() {
		t.Fatal("the TUI's journal is verified before its check")
	}
	if _, err := j.Append(journalEntry("ana", nil)); !errors.Is(err, journal.ErrUnverified) {
		t.Fatalf("append before the check: %v", err)
	}
	if err := v.Verify(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(journalEntry("ana", nil)); err != nil {
		t.Fatalf("append after the check: %v", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(path+".head", []byte(`{"entries":9,"head":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.openTUIJournal(); !errors.Is(err, journal.ErrDamaged) {
		t.Fatalf("a journal cut short opened: %v", err)
	}
}

// Under dlqt serve a session's TUI writes through the server's journal,
// checked whole when the server started: no second check, no wait.
func TestServeSessionTUIJournalIsTheServersChecked(t *testing.T) {
	a := &app{journalPath: filepath.Join(t.TempDir(), "j.db")}
	server, err := journal.OpenShared(a.journalPath, time.Second, journal.Stamp{})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	s := &sshSession{Session: serve.Session{ID: "1", User: &access.User{Name: "alice", Role: access.Operator}}, journal: server}
	j, err := a.sessionApp(s, &bytes.Buffer{}).openTUIJournal()
	if err != nil {
		t.Fatal(err)
	}
	if j.Shared != server || !j.Verified() {
		t.Fatalf("the session's TUI journal is not the server's checked one")
	}
}
