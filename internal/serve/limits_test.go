package serve

import (
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// An idle TCP connection that never authenticates is closed after the
// handshake timeout (issue 22 item 9: such connections stayed forever).
func TestAConnectionThatNeverAuthenticatesIsClosedAfterTheHandshakeTimeout(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4, HandshakeTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", b.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	_, err = io.Copy(io.Discard, c) // the server's version line, then nothing until it closes
	if err != nil {
		t.Fatalf("the idle connection was still open after %s: %v", time.Since(start), err)
	}
}

// Idle connections beyond MaxUnauthenticated close the oldest of them, and
// a person with a key still gets in beside them.
func TestIdleConnectionsAreBoundedAndKeepNobodyOut(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4, MaxUnauthenticated: 8, HandshakeTimeout: time.Minute})
	var conns []net.Conn
	for range 20 {
		c, err := net.Dial("tcp", b.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	waitFor(t, "20 connections counted or closed", func() bool { return b.srv.shakes.count() == 8 })
	var closed atomic.Int32 // read at once: a read past its deadline fails even at EOF
	var reads sync.WaitGroup
	for _, c := range conns {
		reads.Go(func() {
			c.SetReadDeadline(time.Now().Add(time.Second))
			if _, err := io.Copy(io.Discard, c); err == nil {
				closed.Add(1)
			}
		})
	}
	reads.Wait()
	if closed.Load() != 12 {
		t.Fatalf("%d of 20 idle connections were closed, want the 12 oldest beyond 8", closed.Load())
	}
	if _, _, code := b.exec(t, "alice", "queues"); code != 3 {
		t.Fatalf("alice beside 8 idle connections: exit %d", code)
	}
	// alice's connection closed the oldest idle one, then stopped counting
	if n := b.srv.shakes.count(); n != 7 {
		t.Fatalf("%d connections counted as unauthenticated after alice's, want 7", n)
	}
}

// One user may hold MaxSessionsPerUser sessions; another still gets in.
func TestOneUserCannotTakeEverySession(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4, MaxSessionsPerUser: 1})
	screen, in, wait := b.tui(t, "alice")
	waitFor(t, "alice's TUI", func() bool { return strings.Contains(screen.String(), "hello alice") })
	_, errOut, code := b.exec(t, "alice", "queues")
	if code != 1 || !strings.Contains(errOut, "alice has 1 sessions open, the most one user may (--max-sessions-per-user)") {
		t.Fatalf("alice's second session: exit %d, %q", code, errOut)
	}
	if _, _, code := b.exec(t, "bob", "queues"); code != 3 {
		t.Fatalf("bob beside alice: exit %d", code)
	}
	in.Write([]byte("q"))
	wait()
}

// Viewers cannot take the slots kept for operators.
func TestViewersLeaveTheOperatorSlotsFree(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 2, OperatorSessions: 1})
	screen, in, wait := b.tui(t, "bob")
	waitFor(t, "bob's TUI", func() bool { return strings.Contains(screen.String(), "hello bob") })
	_, errOut, code := b.exec(t, "bob", "queues")
	if code != 1 || !strings.Contains(errOut, "the last 1 of 2 are kept for operators (--operator-sessions)") {
		t.Fatalf("bob's second session: exit %d, %q", code, errOut)
	}
	if _, _, code := b.exec(t, "alice", "queues"); code != 3 {
		t.Fatalf("alice, an operator, beside bob: exit %d", code)
	}
	in.Write([]byte("q"))
	wait()
}

// A headless command whose client reads none of its output is closed
// after IdleTimeout instead of holding its session for good.
func TestAHeadlessSessionThatReadsNothingIsClosed(t *testing.T) {
	b := startBed(t, Config{MaxSessions: 4, IdleTimeout: 500 * time.Millisecond})
	c, err := b.dial(t, "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StdoutPipe(); err != nil { // never read: the window fills
		t.Fatal(err)
	}
	if err := s.Start("flood"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the flooding session closed", func() bool { return len(b.run.journaled()) == 2 && b.srv.count() == 0 })
}
