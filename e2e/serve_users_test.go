package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A users file with a mistake stops dlqt serve at start with one line that
// names the file and the line.
func TestServeRefusesABadUsersFileWithOneLine(t *testing.T) {
	users := filepath.Join(t.TempDir(), "users.yaml")
	doc := "users:\n  - name: alice\n    role: admin\n    keys: [\"ssh-ed25519 AAAA\"]\n"
	if err := os.WriteFile(users, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runDlqt(t, isolatedEnv(t), "serve", "--demo", "--listen", freeLoopback(t), "--users", users)
	want := "dlqt: " + users + ":3: bad role \"admin\": viewer or operator\n"
	if r.code != 2 || r.stderr != want {
		t.Fatalf("exit %d, stderr %q, want exit 2 and %q", r.code, r.stderr, want)
	}
}

// kill -HUP re-reads the users file: a bad one is reported and the users
// in force stay; a good one takes effect for the next connection.
func TestServeSIGHUPRereadsTheUsersFile(t *testing.T) {
	b := startServe(t, isolatedEnv(t), "--demo", "--journal", filepath.Join(t.TempDir(), "j.db"))
	good, err := os.ReadFile(b.users)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.users, []byte("users:\n  - name: alice\n    rol: operator\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.cmd.Process.Signal(syscall.SIGHUP)
	b.waitLog("SIGHUP: " + b.users + ":3: unknown field \"rol\"; keeping the users file loaded before (3 users)")
	if r := b.ssh("alice", "queues"); r.code != 0 {
		t.Fatalf("alice after a bad reload: exit %d %s", r.code, r.stderr)
	}
	// only bob stays
	var kept []string
	lines := strings.Split(string(good), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "  - name: ") && lines[i] != "  - name: bob" {
			i += 2
			continue
		}
		kept = append(kept, lines[i])
	}
	if err := os.WriteFile(b.users, []byte(strings.Join(kept, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	b.cmd.Process.Signal(syscall.SIGHUP)
	b.waitLog("SIGHUP: 1 users from " + b.users)
	if r := b.ssh("alice", "queues"); r.code != 255 || !strings.Contains(r.stderr, "Permission denied (publickey)") {
		t.Fatalf("alice after the reload removed her: exit %d %s", r.code, r.stderr)
	}
	if r := b.ssh("bob", "queues"); r.code != 0 {
		t.Fatalf("bob after the reload: exit %d %s", r.code, r.stderr)
	}
}

// A resized terminal reaches the session's TUI: it lays itself out again
// for the new size (wish's bubbletea middleware forwards window changes).
func TestServeTUIFollowsAResizedTerminal(t *testing.T) {
	b := startServe(t, isolatedEnv(t), "--demo", "--journal", filepath.Join(t.TempDir(), "j.db"))
	s := b.tui("alice", 140, 40)
	s.waitFor("actor alice │ operator", "billing.parking")
	s.tmux("resize-window", "-t", s.session, "-x", "70", "-y", "20")
	// laid out again, not cropped by tmux: the table's header keeps its
	// depth column and the status line is still on screen, cut to fit
	scr := s.waitFor("state queue", "depth", " snapshot demo", "q/ctrl+c quit")
	assertFits(t, scr, 70, 20)
}
