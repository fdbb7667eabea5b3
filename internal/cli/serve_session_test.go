package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/access"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/serve"
	"github.com/dlqt/dlqt/internal/triage"
)

// What a session may run headless is decided before anything is dialled or
// opened: these all stop in resolve, on a server with no broker at all.
func TestSessionCommandsRefusedBeforeTouchingAnything(t *testing.T) {
	server := &app{amqpURL: "amqp://guest:guest@127.0.0.1:1/", vhost: "shop", host: "bastion"}
	viewer := &access.User{Name: "bob", Role: access.Viewer}
	operator := &access.User{Name: "alice", Role: access.Operator}
	tests := []struct {
		name     string
		user     *access.User
		readOnly bool
		args     []string
		want     string
	}{
		{"viewer discards", viewer, false, []string{"discard", "q", "--group", "rejected", "--reason", "r", "--yes"}, "discard refused: bob is a viewer; discard and replay need an operator"},
		{"viewer replays", viewer, false, []string{"replay", "q", "--group", "rejected", "--yes"}, "replay refused: bob is a viewer"},
		{"read-only server", operator, true, []string{"discard", "q", "--group", "rejected", "--reason", "r", "--yes"}, "discard refused: read-only mode"},
		{"--read-only restricts", operator, false, []string{"--read-only", "replay", "q", "--group", "rejected", "--yes"}, "replay refused: read-only mode"},
		{"snapshot writes a server file", operator, false, []string{"snapshot", "--out", "/tmp/x"}, "dlqt snapshot is not available over SSH"},
		{"quarantine", operator, false, []string{"quarantine", "q", "--position", "0"}, "dlqt quarantine is not available over SSH"},
		{"contexts", operator, false, []string{"contexts"}, "dlqt contexts is not available over SSH"},
		{"another journal", operator, false, []string{"queues", "--journal", "/tmp/j.db"}, "--journal is not available over SSH"},
		{"another broker", operator, false, []string{"--amqp-url", "amqp://x", "queues"}, "--amqp-url is not available over SSH"},
		{"another actor", operator, false, []string{"groups", "q", "--actor", "carol"}, "--actor is not available over SSH"},
		{"export to a server file", operator, false, []string{"journal", "export", "--out", "/tmp/e.jsonl"}, "--out is not available over SSH"},
		{"verify a server file", viewer, false, []string{"journal", "verify", "--file", "/etc/passwd"}, "--file is not available over SSH"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := *server
			srv.readOnly = tc.readOnly
			r := &serveRunner{a: &srv}
			var out, errb bytes.Buffer
			code := r.Exec(context.Background(), serve.Session{User: tc.user, Command: tc.args}, &out, &errb)
			if code != exitUsage || !strings.Contains(errb.String(), tc.want) || out.Len() != 0 {
				t.Fatalf("exit %d, stderr %q, stdout %q; want exit 2 and %q", code, errb.String(), out.String(), tc.want)
			}
		})
	}
}

// A session's journal adds the session's key and address to every entry,
// over whatever a record says under the same names.
func TestSessionJournalStampsEveryEntry(t *testing.T) {
	dir := t.TempDir()
	a := &app{journalPath: dir + "/j.db"}
	j, err := a.openJournal()
	if err != nil {
		t.Fatal(err)
	}
	s := &sshSession{Session: serve.Session{ID: "7", User: &access.User{Name: "alice", Role: access.Operator},
		Fingerprint: "SHA256:abc", Addr: "10.0.0.9:50000"}, journal: j.Shared}
	sa := a.sessionApp(s, &bytes.Buffer{})
	sj, err := sa.openJournal()
	if err != nil {
		t.Fatal(err)
	}
	e, err := sj.Append(journalEntry("alice", map[string]any{"ssh_fingerprint": "SHA256:forged", "step": "decision"}))
	if err != nil {
		t.Fatal(err)
	}
	if e.Details["ssh_fingerprint"] != "SHA256:abc" || e.Details["client_addr"] != "10.0.0.9:50000" ||
		e.Details["ssh_session"] != "7" || e.Details["step"] != "decision" || sa.actor != "alice" {
		t.Fatalf("entry details %v, actor %q", e.Details, sa.actor)
	}
}

func journalEntry(actor string, details map[string]any) journal.Entry {
	return journal.Entry{Actor: actor, Action: triage.ActionTag, Vhost: "shop", Queue: "q", MessageIDs: []string{"m-1"}, Reason: "dup", Details: details}
}
