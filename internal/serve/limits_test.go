package serve

import (
	"errors"
	"io"
	"maps"
	"net"
	"slices"
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

// The connection displaced is the oldest by accept order, whatever order
// the ssh server's goroutines track them in, and one that never sent a
// byte goes before one that did (CI: an ssh accepted after 140 idle
// connections was tracked before some of them and closed as the oldest).
func TestTheConnectionDisplacedIsTheOldestSilentOneByAcceptOrder(t *testing.T) {
	type conn struct {
		pc   *pendingConn
		peer net.Conn
	}
	open := func(h *handshakes, seq uint64, speaks bool) conn {
		server, peer := net.Pipe()
		pc := h.add(&acceptedConn{Conn: server, seq: seq})
		if speaks {
			go peer.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n"))
			if _, err := pc.Read(make([]byte, 64)); err != nil {
				t.Fatalf("connection %d: %v", seq, err)
			}
		}
		return conn{pc, peer}
	}
	closed := func(c conn) bool {
		c.peer.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		_, err := c.peer.Write([]byte{0})
		return errors.Is(err, io.ErrClosedPipe)
	}
	tests := []struct {
		name   string
		max    int
		order  []uint64 // accept numbers, in the order they are tracked
		speaks map[uint64]bool
		closed []uint64
	}{
		{"tracked in accept order", 3, []uint64{1, 2, 3, 4, 5}, nil, []uint64{1, 2}},
		{"the newest tracked early survives", 3, []uint64{1, 6, 2, 3, 4, 5}, nil, []uint64{1, 2, 3}},
		{"the newest tracked first survives", 2, []uint64{9, 1, 2, 3}, nil, []uint64{1, 2}},
		{"one that spoke outlives older silent ones", 2, []uint64{1, 2, 3, 4}, map[uint64]bool{1: true}, []uint64{2, 3}},
		{"when all spoke, the oldest goes", 2, []uint64{1, 2, 3}, map[uint64]bool{1: true, 2: true, 3: true}, []uint64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &handshakes{max: tt.max}
			conns := map[uint64]conn{}
			for _, seq := range tt.order {
				conns[seq] = open(h, seq, tt.speaks[seq])
			}
			var got []uint64
			for _, seq := range slices.Sorted(maps.Keys(conns)) {
				if closed(conns[seq]) {
					got = append(got, seq)
				}
			}
			if !slices.Equal(got, tt.closed) {
				t.Fatalf("closed %v, want %v", got, tt.closed)
			}
			if n := h.count(); n != tt.max {
				t.Fatalf("%d counted, want %d", n, tt.max)
			}
		})
	}
}

// hasSpoken sees the bytes a peer sent without taking them from the
// connection, and does not wait when there are none.
func TestHasSpokenPeeksWithoutReading(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if hasSpoken(server) {
		t.Fatal("a connection that sent nothing has spoken")
	}
	line := "SSH-2.0-OpenSSH_9.2\r\n"
	if _, err := client.Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the version line to arrive", func() bool { return hasSpoken(server) })
	got := make([]byte, len(line))
	server.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(server, got); err != nil || string(got) != line {
		t.Fatalf("read after the peek: %q, %v; want the whole line", got, err)
	}
}
