package serve

import (
	"fmt"
	"net"
	"slices"
	"sync"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/access"
)

// handshakes bounds the connections that have not authenticated yet. Each
// has HandshakeTimeout to do so; when MaxUnauthenticated of them are open,
// a new one closes the oldest, so idle connections cannot keep a person
// with a key out (140 idle TCP connections did, with neither bound).
type handshakes struct {
	mu      sync.Mutex
	max     int
	pending []*pendingConn // oldest first
}

// pendingConn is a connection counted by handshakes until it authenticated
// or closed.
type pendingConn struct {
	net.Conn
	h    *handshakes
	once sync.Once
}

type pendingKey struct{}

// track is the server's ConnCallback: it counts conn, closing the oldest
// unauthenticated connection when there are already max of them.
func (h *handshakes) track(ctx ssh.Context, conn net.Conn) net.Conn {
	pc := &pendingConn{Conn: conn, h: h}
	ctx.SetValue(pendingKey{}, pc)
	h.mu.Lock()
	var oldest *pendingConn
	if h.max > 0 && len(h.pending) >= h.max {
		oldest, h.pending = h.pending[0], h.pending[1:]
	}
	h.pending = append(h.pending, pc)
	h.mu.Unlock()
	if oldest != nil {
		oldest.Conn.Close()
	}
	return pc
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
