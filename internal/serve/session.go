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
	ctx, cancel := mergeDone(ctx, sess.Context())
	defer cancel()
	o, err := s.admit(sess, cancel)
	if err != nil {
		wish.Errorln(sess, "dlqt serve:", err)
		s.logf("refused %s: %v", sess.RemoteAddr(), err)
		_ = sess.Exit(1)
		return
	}
	s.active.Add(1)
	defer s.active.Done()
	defer s.leave(o.Session)
	if len(o.Command) > 0 {
		s.runExec(ctx, cancel, o, sess)
		return
	}
	// activeterm first: a session without a PTY is told so before any
	// broker connection is made for it. Its size is clamped before Bubble
	// Tea sees it, so no client can size the server out of memory.
	activeterm.Middleware()(func(sess ssh.Session) { s.runTUI(ctx, cancel, o, sess) })(clampPty(sess))
}

// openSession is a session while it is open: how to end it from outside
// (a reload that removed its key) and why it was.
type openSession struct {
	*Session
	cancel context.CancelFunc
	why    atomic.Pointer[string]
}

// end stops the session's work, as SIGTERM does; why is told to its user
// once the TUI or command ended.
func (o *openSession) end(why string) {
	o.why.Store(&why)
	o.cancel()
}

// ended tells the user why the server ended the session, if it did. A
// TUI's notice goes to its screen after the program restored it: stderr
// could overtake the restore and be wiped with the alternate screen.
func (o *openSession) ended(w io.Writer) {
	if why := o.why.Load(); why != nil {
		fmt.Fprintln(w, "dlqt serve: "+*why) // a PTY session writes \r\n
	}
}

// admit names the session's user from the key it authenticated with, read
// again here against the users file in force (it may have been reloaded,
// and the auth callback may have seen other keys first), and counts it
// against the session limits (roomFor).
//
// The key is looked up under mu, where Reload stores a new users file, so
// a reload either sees this session or this lookup sees the reload.
func (s *Server) admit(sess ssh.Session, cancel context.CancelFunc) (*openSession, error) {
	k := sess.PublicKey()
	s.mu.Lock()
	u, ok := s.users.Load().ByKey(k)
	if !ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("key is not in the users file")
	}
	se := &Session{
		ID: strconv.FormatInt(s.seq.Add(1), 10), User: u, Fingerprint: gossh.FingerprintSHA256(k),
		Addr: sess.RemoteAddr().String(), Command: sess.Command(),
	}
	if err := s.roomFor(u, s.open); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	o := &openSession{Session: se, cancel: cancel}
	s.open[se.ID] = o
	s.mu.Unlock()
	if err := s.run.Journal(*se, true); err != nil {
		s.forget(se)
		return nil, fmt.Errorf("the session could not be journaled: %w", err)
	}
	s.logf("session %s: %s (%s, %s) from %s %s", se.ID, u.Name, u.Role, se.Fingerprint, se.Addr, s.shownCommand(se.Command))
	return o, nil
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
func (s *Server) runTUI(ctx context.Context, cancel context.CancelFunc, se *openSession, sess ssh.Session) {
	// The TUI's broker connection is made first (up to the connect
	// timeout per node): say so, rather than leave the screen blank.
	fmt.Fprint(sess, "dlqt serve: connecting to the broker…\r\n")
	t, err := s.run.TUI(ctx, *se.Session)
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
		fmt.Fprintf(sess, "dlqt serve: no key for %s: session closed\n", s.cfg.IdleTimeout) // to the screen, as ended says
	default:
	}
	se.ended(sess)
	_ = sess.Exit(0)
}

// runExec runs a headless command. A client that stops reading its output
// leaves the command blocked on a write, holding a session slot for good:
// once a write is blocked for IdleTimeout the session is closed.
func (s *Server) runExec(ctx context.Context, cancel context.CancelFunc, se *openSession, sess ssh.Session) {
	out, errOut := &stallingWriter{w: sess}, &stallingWriter{w: sess.Stderr()}
	done := make(chan struct{}) // until the last write, the notice's included
	defer close(done)
	if s.cfg.IdleTimeout > 0 {
		go func() {
			if s.watchStall(done, out, errOut) {
				s.logf("session %s: %s read none of its output for %s: closed", se.ID, se.User.Name, s.cfg.IdleTimeout)
				cancel()
				sess.Close() // the blocked write returns
			}
		}()
	}
	code := s.run.Exec(ctx, *se.Session, out, errOut)
	se.ended(errOut)
	_ = sess.Exit(code)
}

// watchStall reports true once one of ws has been blocked in a write for
// IdleTimeout; false when done closed first.
func (s *Server) watchStall(done <-chan struct{}, ws ...*stallingWriter) bool {
	tick := time.NewTicker(idleTick(s.cfg.IdleTimeout))
	defer tick.Stop()
	for {
		select {
		case <-done:
			return false
		case <-tick.C:
		}
		for _, w := range ws {
			if since := w.blockedSince(); !since.IsZero() && time.Since(since) >= s.cfg.IdleTimeout {
				return true
			}
		}
	}
}

// idleTick is how often an idle limit is looked at.
func idleTick(limit time.Duration) time.Duration {
	return min(max(limit/20, 100*time.Millisecond), 5*time.Second)
}

// stallingWriter notes when a write to the client began and has not
// returned yet.
type stallingWriter struct {
	w     io.Writer
	since atomic.Int64
}

func (sw *stallingWriter) Write(p []byte) (int, error) {
	sw.since.Store(time.Now().UnixNano())
	defer sw.since.Store(0)
	return sw.w.Write(p)
}

func (sw *stallingWriter) blockedSince() time.Time {
	if n := sw.since.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// watchIdle ends the session once no key came for IdleTimeout and the
// TUI runs nothing (a replay in progress keeps it open).
func (s *Server) watchIdle(ctx context.Context, cancel context.CancelFunc, in *activity, acting func() bool, idle chan<- struct{}) {
	tick := time.NewTicker(idleTick(s.cfg.IdleTimeout))
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
