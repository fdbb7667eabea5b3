package serve

import (
	"os"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

func TestExecRunsAsTheKeysUserAndKeepsItsExitStatus(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4})
	out, _, code := b.exec(t, "bob", "groups orders.dlq --json")
	fp := gossh.FingerprintSHA256(b.peers["bob"].signer.PublicKey())
	if code != 3 || out != "bob viewer groups|orders.dlq|--json "+fp {
		t.Fatalf("exit %d, out %q", code, out)
	}
	waitFor(t, "session_end journaled", func() bool { return len(b.run.journaled()) == 2 })
	if got := b.run.journaled(); got[0] != "true bob "+fp || got[1] != "false bob "+fp {
		t.Fatalf("journaled %v", got)
	}
}

func TestAKeyNotInTheUsersFileIsRefusedAtAuthentication(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4})
	if _, err := b.dial(t, "carol"); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("carol's key: %v", err)
	}
	if got := b.run.journaled(); len(got) != 0 {
		t.Fatalf("a refused key journaled %v", got)
	}
}

func TestATUIWithoutAPTYIsRefusedAndWithOneGreetsItsUser(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4})
	c, err := b.dial(t, "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, _ := c.NewSession()
	out, _ := s.CombinedOutput("")
	if !strings.Contains(string(out), "Requires an active PTY") {
		t.Fatalf("no PTY: %q", out)
	}
	screen, in, wait := b.tui(t, "alice")
	waitFor(t, "the TUI greets alice", func() bool { return strings.Contains(screen.String(), "hello alice") })
	in.Write([]byte("q"))
	if err := wait(); err != nil {
		t.Fatalf("session end: %v", err)
	}
	waitFor(t, "the TUI's work stopped", func() bool { return b.run.stopped.Load() == 1 })
}

func TestMaxSessionsRefusesOneMoreWithOneLine(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 1})
	screen, in, wait := b.tui(t, "alice")
	waitFor(t, "alice's TUI", func() bool { return strings.Contains(screen.String(), "hello alice") })
	_, errOut, code := b.exec(t, "bob", "queues")
	if code != 1 || !strings.Contains(errOut, "1 sessions are open, the most this server allows (--max-sessions)") {
		t.Fatalf("second session: exit %d, %q", code, errOut)
	}
	in.Write([]byte("q"))
	wait()
	waitFor(t, "alice's session gone", func() bool { return b.srv.count() == 0 })
	if _, _, code := b.exec(t, "bob", "queues"); code != 3 {
		t.Fatalf("after alice left, bob's command exited %d", code)
	}
}

func TestIdleTimeoutClosesAnIdleTUIButNotOneThatActs(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4, IdleTimeout: 400 * time.Millisecond})
	b.run.acting.Store(true) // a replay runs: no timeout
	screen, in, wait := b.tui(t, "alice")
	ended := make(chan error, 1)
	go func() { ended <- wait() }()
	waitFor(t, "alice's TUI", func() bool { return strings.Contains(screen.String(), "hello alice") })
	select {
	case <-ended:
		t.Fatal("a session with a running replay timed out")
	case <-time.After(1200 * time.Millisecond):
	}
	for range 4 { // keys keep it open too
		b.run.acting.Store(false)
		in.Write([]byte("x"))
		time.Sleep(200 * time.Millisecond)
	}
	select {
	case <-ended:
		t.Fatal("a session whose user types timed out")
	default:
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("an idle session stayed open")
	}
	waitFor(t, "the idle notice", func() bool { return strings.Contains(screen.String(), "no key for 400ms: session closed") })
}

func TestReloadKeepsTheUsersInForceWhenTheFileIsBad(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4})
	if err := os.WriteFile(b.users, []byte("users:\n  - name: alice\n    rol: operator\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := b.srv.Reload()
	if err == nil || !strings.Contains(err.Error(), "users.yaml:3: unknown field \"rol\"; keeping the users file loaded before (2 users)") {
		t.Fatalf("bad reload: %v", err)
	}
	if _, _, code := b.exec(t, "alice", "queues"); code != 3 {
		t.Fatal("alice lost her access to a bad file")
	}
	usersFile(t, b.users, map[string]peer{"carol": b.peers["carol"]})
	if err := b.srv.Reload(); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := b.exec(t, "carol", "queues"); !strings.HasPrefix(out, "carol operator") {
		t.Fatalf("carol after the reload: %q", out)
	}
	if _, err := b.dial(t, "alice"); err == nil {
		t.Fatal("alice still gets in after the reload removed her")
	}
}

func TestShutdownEndsOpenSessionsAndStopsTheirWork(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4})
	screen, _, wait := b.tui(t, "alice")
	waitFor(t, "alice's TUI", func() bool { return strings.Contains(screen.String(), "hello alice") })
	start := time.Now()
	if err := b.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	wait()
	if b.run.stopped.Load() != 1 || time.Since(start) > 3*time.Second {
		t.Fatalf("shutdown: TUI stopped %d times, took %s", b.run.stopped.Load(), time.Since(start))
	}
	if got := b.run.journaled(); len(got) != 2 || !strings.HasPrefix(got[1], "false alice") {
		t.Fatalf("journaled %v", got)
	}
}

func TestHostKeyIsGeneratedPrivateAndKept(t *testing.T) {
	path := t.TempDir() + "/state/dlqt/host_key"
	fp, err := EnsureHostKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("host key mode %v, %v", st.Mode(), err)
	}
	if again, err := EnsureHostKey(path); err != nil || again != fp {
		t.Fatalf("second start: %s %v, want the same key %s", again, err, fp)
	}
	os.Chmod(path, 0o644)
	if _, err := EnsureHostKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a readable host key: %v", err)
	}
}
