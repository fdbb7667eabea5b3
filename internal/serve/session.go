package serve

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/activeterm"
	gossh "golang.org/x/crypto/ssh"
)

// handleIn runs one SSH session under ctx (the server's life).
func (s *Server) handleIn(ctx context.Context, sess ssh.Session) {
	se, err := s.admit(sess)
	if err != nil {
		wish.Errorln(sess, "dlqt serve:", err)
		s.logf("refused %s: %v", sess.RemoteAddr(), err)
		_ = sess.Exit(1)
		return
	}
	s.active.Add(1)
	defer s.active.Done()
	defer s.leave(se)
	ctx, cancel := mergeDone(ctx, sess.Context())
	defer cancel()
	if len(se.Command) > 0 {
		code := s.run.Exec(ctx, *se, sess, sess.Stderr())
		_ = sess.Exit(code)
		return
	}
	// activeterm first: a session without a PTY is told so before any
	// broker connection is made for it.
	activeterm.Middleware()(func(sess ssh.Session) { s.runTUI(ctx, cancel, se, sess) })(sess)
}

// admit names the session's user from the key it authenticated with, read
// again here against the users file in force (it may have been reloaded,
// and the auth callback may have seen other keys first), and counts it
// against --max-sessions.
func (s *Server) admit(sess ssh.Session) (*Session, error) {
	k := sess.PublicKey()
	u, ok := s.users.Load().ByKey(k)
	if !ok {
		return nil, fmt.Errorf("key is not in the users file")
	}
	se := &Session{
		ID: strconv.FormatInt(s.seq.Add(1), 10), User: u, Fingerprint: gossh.FingerprintSHA256(k),
		Addr: sess.RemoteAddr().String(), Command: sess.Command(),
	}
	s.mu.Lock()
	n := len(s.open)
	if s.cfg.MaxSessions > 0 && n >= s.cfg.MaxSessions {
		s.mu.Unlock()
		return nil, fmt.Errorf("%d sessions are open, the most this server allows (--max-sessions): try again later", n)
	}
	s.open[se.ID] = se
	s.mu.Unlock()
	if err := s.run.Journal(*se, true); err != nil {
		s.forget(se)
		return nil, fmt.Errorf("the session could not be journaled: %w", err)
	}
	s.logf("session %s: %s (%s, %s) from %s %q", se.ID, u.Name, u.Role, se.Fingerprint, se.Addr, sess.RawCommand())
	return se, nil
}

func (s *Server) forget(se *Session) {
	s.mu.Lock()
	delete(s.open, se.ID)
	s.mu.Unlock()
}

func (s *Server) leave(se *Session) {
	s.forget(se)
	if err := s.run.Journal(*se, false); err != nil {
		s.logf("session %s: session_end not journaled: %v", se.ID, err)
	}
	s.logf("session %s: %s left", se.ID, se.User.Name)
}

// runTUI runs the session's TUI until the user quits, the connection or the
// server ends, or it sat idle (no key, nothing running) for IdleTimeout.
func (s *Server) runTUI(ctx context.Context, cancel context.CancelFunc, se *Session, sess ssh.Session) {
	t, err := s.run.TUI(ctx, *se)
	if err != nil {
		wish.Errorln(sess, "dlqt serve:", err)
		_ = sess.Exit(1)
		return
	}
	defer t.Stop()
	in := &activity{r: sess}
	in.touch()
	idle := make(chan struct{})
	if s.cfg.IdleTimeout > 0 {
		go s.watchIdle(ctx, cancel, in, t.Acting, idle)
	}
	ph := func(ssh.Session) *tea.Program {
		p := tea.NewProgram(t.Model, append(teaOptions(sess), tea.WithInput(in))...)
		// quit, not kill, when the server stops or the session idles: the
		// program restores the terminal and Stop then ends the work in order
		context.AfterFunc(ctx, p.Quit)
		return p
	}
	s.teaHandler(ph)(sess)
	select {
	case <-idle:
		wish.Errorln(sess, fmt.Sprintf("dlqt serve: no key for %s: session closed", s.cfg.IdleTimeout))
	default:
	}
	_ = sess.Exit(0)
}

// watchIdle ends the session once no key came for IdleTimeout and the
// TUI runs nothing (a replay in progress keeps it open).
func (s *Server) watchIdle(ctx context.Context, cancel context.CancelFunc, in *activity, acting func() bool, idle chan<- struct{}) {
	every := min(max(s.cfg.IdleTimeout/20, 100*time.Millisecond), 5*time.Second)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if acting != nil && acting() {
			in.touch()
			continue
		}
		if time.Since(in.last()) >= s.cfg.IdleTimeout {
			close(idle)
			cancel()
			return
		}
	}
}

// activity is the session's input, noting when the user last typed.
type activity struct {
	r    io.Reader
	when atomic.Int64
}

func (a *activity) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.touch()
	}
	return n, err
}

func (a *activity) touch()          { a.when.Store(time.Now().UnixNano()) }
func (a *activity) last() time.Time { return time.Unix(0, a.when.Load()) }

// mergeDone is a context that ends when either a or b does.
func mergeDone(a, b context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(a)
	stop := context.AfterFunc(b, cancel)
	return ctx, func() { stop(); cancel() }
}
