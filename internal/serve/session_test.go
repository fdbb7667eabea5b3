package serve

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
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

// A client's pty-req and window-change sizes reach the TUI clamped to
// 500x300: Bubble Tea keeps about 220 bytes a cell, and a 5000x5000 pty
// ran the server out of memory (issue 22 item 4).
func TestAHugePtyReachesTheTUIClamped(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4})
	screen, in, s, wait := b.tuiSized(t, "alice", 900, 400)
	waitFor(t, "the TUI at 500x300", func() bool { return strings.Contains(screen.String(), "hello alice [500x300]") })
	if err := s.WindowChange(40, 100); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the TUI at 100x40", func() bool { return strings.Contains(screen.String(), "hello alice [100x40]") })
	if err := s.WindowChange(5000, 5000); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the TUI at 500x300 again", func() bool {
		out := screen.String()
		return strings.Count(out, "hello alice [500x300]") > 0 && strings.LastIndex(out, "[500x300]") > strings.LastIndex(out, "[100x40]")
	})
	if out := screen.String(); strings.Contains(out, "[900x400]") || strings.Contains(out, "[5000x5000]") {
		t.Fatalf("the TUI saw an unclamped size:\n%q", out)
	}
	in.Write([]byte("q"))
	wait()
}

// A reload that removes a key ends the sessions open with it, telling the
// user why; the others stay (issue 22 item 8: alice's TUI stayed open and
// could still discard).
func TestAReloadThatRemovesAKeyEndsItsSessions(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4})
	screen, _, wait := b.tui(t, "alice")
	waitFor(t, "alice's TUI", func() bool { return strings.Contains(screen.String(), "hello alice") })
	bob, bobIn, bobWait := b.tui(t, "bob")
	waitFor(t, "bob's TUI", func() bool { return strings.Contains(bob.String(), "hello bob") })
	usersFile(t, b.users, map[string]peer{"bob": b.peers["bob"]})
	if err := b.srv.Reload(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- wait() }()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("alice's session stayed open after the reload removed her key")
	}
	waitFor(t, "the notice", func() bool {
		return strings.Contains(screen.String(), "dlqt serve: your key was removed from this server's users file: session closed")
	})
	waitFor(t, "alice's TUI work stopped", func() bool { return b.run.stopped.Load() == 1 })
	// The client sees its session end before the server has forgotten it.
	waitFor(t, "bob's session, alone open after the reload", func() bool { return b.srv.count() == 1 })
	bobIn.Write([]byte("q"))
	bobWait()
}

// A reload that demotes an operator keeps their session and says so in
// the server's log; the cli refuses its actions from then on.
func TestAReloadThatDemotesAnOperatorSaysSo(t *testing.T) {
	var log syncBuffer
	b := startBed(t, Config{MaxSessions: 4, Log: &log})
	screen, in, wait := b.tui(t, "alice")
	waitFor(t, "alice's TUI", func() bool { return strings.Contains(screen.String(), "hello alice") })
	doc := fmt.Sprintf("users:\n  - name: alice\n    role: viewer\n    keys: [%q]\n", b.peers["alice"].line)
	if err := os.WriteFile(b.users, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.srv.Reload(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the log line", func() bool { return strings.Contains(log.String(), ": alice is now a viewer: no more actions in it") })
	if n := b.srv.count(); n != 1 {
		t.Fatalf("%d sessions open after the demotion, want alice's", n)
	}
	in.Write([]byte("q"))
	wait()
}

// A headless command running when the server shuts down (a replay, say)
// sees its context end with a resumable cause, so the replay stays
// resumable instead of journalling an abort and a finish.
func TestShutdownCancelsTheSessionsWorkResumably(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4})
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := b.dial(t, "alice")
		if err != nil {
			return
		}
		defer c.Close()
		if s, err := c.NewSession(); err == nil {
			_ = s.Run("wait")
		}
	}()
	waitFor(t, "the command runs", func() bool { return len(b.run.journaled()) >= 1 })
	if err := b.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	<-done
	c := b.run.cause.Load()
	var r interface{ Resumable() bool }
	if c == nil || !errors.As(c.err, &r) || !r.Resumable() {
		t.Fatalf("the command's context ended with %v: a replay it runs would abort, not stay resumable", c)
	}
}

// A signal to the server is the server's: a session's program must not
// quit on it by itself. Bubble Tea's own handler made every open TUI quit
// on SIGTERM, racing the shutdown, so a replay running in one was aborted
// instead of stopped resumably (TestServeSIGTERMEndsARunningReplaySafely
// failed so, 1 run in 3 on a loaded machine).
func TestAProcessSignalDoesNotEndTheSessionsByItself(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4})
	screen, _, wait := b.tui(t, "alice")
	waitFor(t, "alice's TUI", func() bool { return strings.Contains(screen.String(), "hello alice") })

	// the test process stands for the server: it takes the signals itself
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		select {
		case <-sigs:
		case <-time.After(5 * time.Second):
			t.Fatalf("%v never arrived", sig)
		}
	}
	time.Sleep(500 * time.Millisecond) // a program that took the signal quits within this
	if n := b.run.stopped.Load(); n != 0 {
		t.Fatalf("the session's TUI ended on a signal to the process (stopped %d times)", n)
	}
	if err := b.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	wait()
	if n := b.run.stopped.Load(); n != 1 {
		t.Fatalf("the shutdown stopped the TUI %d times, want 1", n)
	}
}

// The log names a session's command only as the runner shows it (the
// journal's redacted record); it used to print the client's raw bytes,
// a password typed as a flag included.
func TestTheLogShowsACommandOnlyAsTheRunnerShowsIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		show func([]string) []string
		want string
	}{
		{"shown", func(args []string) []string { return []string{args[0], "[REDACTED]"} }, `"groups [REDACTED]"`},
		{"unset", nil, "(a command of 2 arguments)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log syncBuffer
			b := startBed(t, Config{MaxSessions: 4, Log: &log, ShowCommand: tc.show})
			if _, _, code := b.exec(t, "alice", "groups --password=Hunter2-typed"); code != 3 {
				t.Fatalf("exit %d", code)
			}
			waitFor(t, "the log line", func() bool { return strings.Contains(log.String(), "session 1: alice") })
			if got := log.String(); !strings.Contains(got, tc.want) || strings.Contains(got, "Hunter2") {
				t.Fatalf("the log says:\n%s\nwant %s and no password", got, tc.want)
			}
		})
	}
}

// A TUI session whose broker is slow to answer says it is connecting; the
// screen used to stay blank for up to the connect timeout.
func TestATUISessionSaysItIsConnecting(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4})
	b.run.tuiGate = make(chan struct{})
	screen, _, wait := b.tui(t, "alice")
	waitFor(t, "the connecting line", func() bool { return strings.Contains(screen.String(), "connecting to the broker") })
	close(b.run.tuiGate)
	waitFor(t, "alice's TUI", func() bool { return strings.Contains(screen.String(), "hello alice") })
	if err := b.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	wait()
}
