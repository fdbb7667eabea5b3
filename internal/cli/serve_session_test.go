package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

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
		{"viewer discards", viewer, false, []string{"discard", "q", "--group", "rejected", "--reason", "r", "--yes"}, "discard refused: bob is a viewer; discard and replay (and edit, approve, reject, run) need an operator"},
		{"viewer approves", viewer, false, []string{"approve", "p-1"}, "approve refused: bob is a viewer"},
		{"viewer rejects", viewer, false, []string{"reject", "p-1", "--reason", "no"}, "reject refused: bob is a viewer"},
		{"viewer runs", viewer, false, []string{"run", "p-1", "--yes"}, "run refused: bob is a viewer"},
		{"viewer edits", viewer, false, []string{"edit", "q", "--id", "m-1", "--set", "a=1", "--reason", "r"}, "edit refused: bob is a viewer"},
		{"run on a read-only server", operator, true, []string{"run", "p-1", "--yes"}, "run refused: read-only mode"},
		{"another users file", operator, false, []string{"approve", "p-1", "--users-file", "/tmp/u.yaml"}, "--users-file is not available over SSH"},
		{"another key", operator, false, []string{"--key", "/home/op/.ssh/id_ed25519", "approve", "p-1"}, "--key is not available over SSH"},
		{"a signature file on the server", operator, false, []string{"approve", "p-1", "--signature", "/tmp/sig"}, "--signature is not available over SSH"},
		{"a signature on the server's stdin", operator, false, []string{"reject", "p-1", "--reason", "no", "--signature", "-"}, "--signature is not available over SSH"},
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

// A session's approvals check the users the server has in force (what it
// re-reads on SIGHUP), not a users file of its own or the server's
// --users-file, and never sign with the server's key.
func TestSessionApprovalsUseTheServersUsersInForce(t *testing.T) {
	parse := func(names ...string) *access.Users {
		var text strings.Builder
		text.WriteString("users:\n")
		for _, n := range names {
			pub, _, err := ed25519.GenerateKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			k, err := ssh.NewPublicKey(pub)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&text, "  - name: %s\n    role: operator\n    approves: [orders]\n    keys: [%q]\n", n, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k))))
		}
		us, err := access.Parse("users.yaml", []byte(text.String()))
		if err != nil {
			t.Fatal(err)
		}
		return us
	}
	inForce := parse("alice", "carol")
	server := &app{usersFile: "/nonexistent/users.yaml", keyFile: "/nonexistent/server_key"}
	r := &serveRunner{a: server, users: func() *access.Users { return inForce }}
	sa := server.sessionApp(r.session(serve.Session{User: &access.User{Name: "alice", Role: access.Operator}, Fingerprint: "SHA256:alice"}), &bytes.Buffer{})
	for _, load := range []func() (*access.Users, error){sa.loadUsers, sa.optionalUsers} {
		us, err := load()
		if err != nil || us != inForce {
			t.Fatalf("session users: %v, %v; want the server's in force", us, err)
		}
	}
	inForce = parse("carol") // SIGHUP: alice is gone
	if us, err := sa.loadUsers(); err != nil || us != inForce || len(us.List()) != 1 {
		t.Fatalf("after a reload the session reads %v, %v", us, err)
	}
	if sa.keyFile != "" {
		t.Fatalf("a session signs with the server's key %q", sa.keyFile)
	}
}

func journalEntry(actor string, details map[string]any) journal.Entry {
	return journal.Entry{Actor: actor, Action: triage.ActionTag, Vhost: "shop", Queue: "q", MessageIDs: []string{"m-1"}, Reason: "dup", Details: details}
}

// dlqt serve refuses limits that would leave nobody a session or a
// connection no bound on its handshake, before it opens anything.
func TestServeRefusesLimitsThatLeaveNoRoom(t *testing.T) {
	isolate(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-sessions", "4", "--operator-sessions", "4"}, "--operator-sessions must be from 0 to --max-sessions - 1 (3), got 4"},
		{[]string{"--max-sessions-per-user", "0"}, "--max-sessions-per-user must be at least 1, got 0"},
		{[]string{"--handshake-timeout", "0s"}, "--handshake-timeout must be more than 0 and at most 30s, got 0s"},
		{[]string{"--max-unauthenticated", "0"}, "--max-unauthenticated must be at least 1, got 0"},
	} {
		_, stderr, code := run(t, Assets{}, append([]string{"serve", "--demo", "--listen", "127.0.0.1:0"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
