package serve

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/access"
)

// handshakes bounds the connections that have not authenticated yet. Each
// has HandshakeTimeout to do so; when MaxUnauthenticated of them are open,
// one more closes one of them, so idle connections cannot keep a person
// with a key out (140 idle TCP connections did, with neither bound). The
// one closed is the oldest that never sent a byte (an ssh client sends its
// version line at once, so its line is usually there, unread, when it is
// tracked; an idle connection sends nothing), else the oldest.
// Oldest is by accept order: the ssh server tracks each connection in a
// goroutine of its own, so a connection accepted after 140 idle ones could
// be tracked before some of them and closed as the oldest (the e2e test
// beside 140 idle connections failed on it in CI, ssh exit 255 in 0.1 s).
type handshakes struct {
	mu      sync.Mutex
	max     int
	pending []*pendingConn
}

// pendingConn is a connection counted by handshakes until it authenticated
// or closed.
type pendingConn struct {
	net.Conn
	h     *handshakes
	seq   uint64      // accept order, from acceptOrder
	spoke atomic.Bool // it sent data: seen waiting when tracked, or read
	once  sync.Once
}

type pendingKey struct{}

// track is the server's ConnCallback: it counts conn, closing one
// unauthenticated connection when there are already max of them.
func (h *handshakes) track(ctx ssh.Context, conn net.Conn) net.Conn {
	pc := h.add(conn)
	ctx.SetValue(pendingKey{}, pc)
	return pc
}

// add counts conn and closes the connection it displaces, if any (which
// is conn itself when it is the oldest and every other one spoke).
func (h *handshakes) add(conn net.Conn) *pendingConn {
	pc := &pendingConn{Conn: conn, h: h}
	raw := conn
	if a, ok := conn.(*acceptedConn); ok {
		pc.seq, raw = a.seq, a.Conn
	}
	pc.spoke.Store(hasSpoken(raw))
	h.mu.Lock()
	var victim *pendingConn
	if h.max > 0 && len(h.pending) >= h.max {
		victim = h.displacedBy(pc)
		h.pending = slices.DeleteFunc(h.pending, func(p *pendingConn) bool { return p == victim })
	}
	if victim != pc {
		h.pending = append(h.pending, pc)
	}
	h.mu.Unlock()
	if victim != nil {
		victim.Conn.Close()
	}
	return pc
}

// displacedBy is the connection to close for pc: the oldest pending one
// that never spoke, else the oldest of them and pc (pc has not had the
// time to speak, so its silence says nothing yet). h.mu is held.
func (h *handshakes) displacedBy(pc *pendingConn) *pendingConn {
	var oldestSilent *pendingConn
	oldest := pc
	for _, p := range h.pending {
		if p.seq < oldest.seq {
			oldest = p
		}
		if !p.spoke.Load() && (oldestSilent == nil || p.seq < oldestSilent.seq) {
			oldestSilent = p
		}
	}
	if oldestSilent != nil {
		return oldestSilent
	}
	return oldest
}

func (pc *pendingConn) Read(b []byte) (int, error) {
	n, err := pc.Conn.Read(b)
	if n > 0 && !pc.spoke.Load() {
		pc.spoke.Store(true)
	}
	return n, err
}

// acceptOrder numbers the connections ln accepts, in the order it accepts
// them.
type acceptOrder struct {
	net.Listener
	next atomic.Uint64
}

type acceptedConn struct {
	net.Conn
	seq uint64
}

func (l *acceptOrder) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &acceptedConn{Conn: c, seq: l.next.Add(1)}, nil
}

// config is the server's ServerConfigCallback: a connection stops counting
// once a key's signature verified (a key only queried does not count).
func (h *handshakes) config(ctx ssh.Context) *gossh.ServerConfig {
	return &gossh.ServerConfig{AuthLogCallback: func(_ gossh.ConnMetadata, _ string, err error) {
		if pc, ok := ctx.Value(pendingKey{}).(*pendingConn); ok && err == nil {
			pc.authenticated()
		}
	}}
}

func (h *handshakes) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.pending)
}

func (pc *pendingConn) authenticated() {
	pc.once.Do(func() {
		pc.h.mu.Lock()
		defer pc.h.mu.Unlock()
		if i := slices.Index(pc.h.pending, pc); i >= 0 {
			pc.h.pending = slices.Delete(pc.h.pending, i, i+1)
		}
	})
}

func (pc *pendingConn) Close() error {
	pc.authenticated() // no longer pending either way
	return pc.Conn.Close()
}

// roomFor says why u may not open one more session beside open, nil when
// they may: the server's total, the user's own, and the slots kept for
// operators (so viewers cannot fill the server during an incident).
func (s *Server) roomFor(u *access.User, open map[string]*openSession) error {
	n, mine := len(open), 0
	for _, se := range open {
		if se.User.Name == u.Name {
			mine++
		}
	}
	switch {
	case s.cfg.MaxSessions > 0 && n >= s.cfg.MaxSessions:
		return fmt.Errorf("%d sessions are open, the most this server allows (--max-sessions): try again later", n)
	case s.cfg.MaxSessionsPerUser > 0 && mine >= s.cfg.MaxSessionsPerUser:
		return fmt.Errorf("%s has %d sessions open, the most one user may (--max-sessions-per-user): close one first", u.Name, mine)
	case !u.Role.MayAct() && s.cfg.MaxSessions > 0 && n >= s.cfg.MaxSessions-s.cfg.OperatorSessions:
		return fmt.Errorf("%d sessions are open; the last %d of %d are kept for operators (--operator-sessions): try again later", n, s.cfg.OperatorSessions, s.cfg.MaxSessions)
	}
	return nil
}
