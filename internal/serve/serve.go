// Package serve is `dlqt serve`: an SSH server (wish) where every connection
// is a person named by their public key, with their own TUI or headless
// command and only what their role allows. The server holds the broker
// credentials and the journal; the cli package supplies what a session runs.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/bubbletea"

	"github.com/dlqt/dlqt/internal/access"
)

// Config is what `dlqt serve` was started with.
type Config struct {
	Listen      string
	HostKeyPath string
	UsersPath   string
	MaxSessions int           // sessions open at once; more are refused
	IdleTimeout time.Duration // a TUI without a key for this long ends, unless it is acting

	// MaxSessionsPerUser is how many of them one user may have open;
	// OperatorSessions of them only an operator may take.
	MaxSessionsPerUser int
	OperatorSessions   int
	// HandshakeTimeout is how long a connection has to authenticate;
	// MaxUnauthenticated how many may be doing so at once (one more
	// closes the oldest).
	HandshakeTimeout   time.Duration
	MaxUnauthenticated int

	ShutdownWait time.Duration // how long SIGTERM waits for sessions to end their work
	Log          io.Writer     // one line per connection event; never a session's screen
	// ShowCommand is what the log says of a session's command, which the
	// client chose byte by byte (a secret typed as a flag, escapes): the
	// journal's redacted, bounded record. Nil: only how many arguments.
	ShowCommand func(args []string) []string
}

// Session is one connected person.
type Session struct {
	ID          string
	User        *access.User
	Fingerprint string // SHA256 of the key they authenticated with
	Addr        string // the client's address
	Command     []string
}

// Details are what every journal entry made in the session carries.
func (s Session) Details() map[string]any {
	return map[string]any{"ssh_fingerprint": s.Fingerprint, "client_addr": s.Addr, "ssh_session": s.ID}
}

// TUI is a session's model, whether it is acting (a running replay keeps an
// idle session open), and what to stop once its program ended.
type TUI struct {
	Model  tea.Model
	Acting func() bool
	Stop   func()
}

// Runner is what sessions run, supplied by the cli package.
type Runner interface {
	// TUI builds the interactive session's model; ctx ends with the session.
	TUI(ctx context.Context, s Session) (TUI, error)
	// Exec runs a headless command and returns its exit code.
	Exec(ctx context.Context, s Session, stdout, stderr io.Writer) int
	// Journal records the session's start and end.
	Journal(s Session, start bool) error
}

// Server is a running `dlqt serve`.
type Server struct {
	cfg    Config
	run    Runner
	users  atomic.Pointer[access.Users]
	ssh    *ssh.Server
	active sync.WaitGroup
	mu     sync.Mutex
	open   map[string]*openSession // under mu, as the users in force are stored
	seq    atomic.Int64
	shakes handshakes
}

// New checks the users file and the host key and prepares the server.
func New(cfg Config, run Runner) (*Server, error) {
	us, err := access.Load(cfg.UsersPath)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, run: run, open: map[string]*openSession{}, shakes: handshakes{max: cfg.MaxUnauthenticated}}
	s.users.Store(us)
	s.ssh, err = wish.NewServer(
		wish.WithAddress(cfg.Listen),
		ssh.HostKeyFile(cfg.HostKeyPath),
		wish.WithPublicKeyAuth(func(_ ssh.Context, k ssh.PublicKey) bool {
			_, ok := s.users.Load().ByKey(k)
			return ok
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("ssh server: %w", err)
	}
	s.ssh.HandshakeTimeout = cfg.HandshakeTimeout
	s.ssh.ConnCallback = s.shakes.track
	s.ssh.ServerConfigCallback = s.shakes.config
	return s, nil
}

// Users is the users file in force.
func (s *Server) Users() *access.Users { return s.users.Load() }

// Reload re-reads the users file; a bad file keeps the one in force. An
// open session whose key is gone ends (a running replay aborts and puts its
// messages back, as on SIGTERM); one whose user lost the operator role
// stays, and each action it starts from now on is refused (the cli checks
// the users in force before every action).
func (s *Server) Reload() error {
	us, err := access.Load(s.cfg.UsersPath)
	if err != nil {
		return fmt.Errorf("%w; keeping the users file loaded before (%d users)", err, len(s.users.Load().List()))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users.Store(us)
	for _, se := range s.open {
		u, ok := us.ByFingerprint(se.Fingerprint)
		switch {
		case !ok:
			s.logf("session %s: %s's key %s is no longer in the users file: closing it", se.ID, se.User.Name, se.Fingerprint)
			se.end("your key was removed from this server's users file: session closed")
		case se.User.Role.MayAct() && !u.Role.MayAct():
			s.logf("session %s: %s is now a %s: no more actions in it", se.ID, u.Name, u.Role)
		}
	}
	return nil
}

// Serve listens and serves until ctx ends, then stops accepting, lets each
// session end its work (a replay stops, puts its sources back and stays
// resumable: ErrShutdown) for at most ShutdownWait, and closes what is left.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	sctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	s.ssh.Handler = func(sess ssh.Session) { s.handleIn(sctx, sess) }
	errc := make(chan error, 1)
	go func() { errc <- s.ssh.Serve(&acceptOrder{Listener: ln}) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.logf("shutting down: %d sessions open", s.count())
	ln.Close()          // nobody new while the others finish
	cancel(ErrShutdown) // every session's context: TUIs quit, headless commands stop, replays stay resumable
	wait, done := context.WithTimeout(context.Background(), s.cfg.ShutdownWait)
	defer done()
	finished := make(chan struct{})
	go func() { s.active.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-wait.Done():
		s.logf("sessions still open after %s: closing them", s.cfg.ShutdownWait)
	}
	err := s.ssh.Close()
	if errors.Is(err, ssh.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		// net.ErrClosed: Close closes the listener again, which the line
		// above closed already (TestShutdownEndsOpenSessionsAndStopsTheirWork
		// failed 1 run in about 30 on it)
		err = nil
	}
	return err
}

// ErrShutdown is the cause of every session's cancelled context when the
// server shuts down. It is resumable: a replay it stops ends with a stop,
// not a finish, so that `dlqt replay --resume` continues it (an operator's
// Ctrl-C aborts instead).
var ErrShutdown error = shutdown{}

type shutdown struct{}

func (shutdown) Error() string {
	return "dlqt serve is shutting down: resume with dlqt replay --resume"
}
func (shutdown) Resumable() bool { return true }

// shownCommand is the log's text of a session's command ("" for a TUI).
func (s *Server) shownCommand(args []string) string {
	switch {
	case len(args) == 0:
		return `""`
	case s.cfg.ShowCommand == nil:
		if len(args) == 1 {
			return "(a command of 1 argument)"
		}
		return fmt.Sprintf("(a command of %d arguments)", len(args))
	}
	return strconv.Quote(strings.Join(s.cfg.ShowCommand(args), " "))
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Log != nil {
		fmt.Fprintf(s.cfg.Log, "dlqt serve: "+format+"\n", args...)
	}
}

func (s *Server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

// teaHandler is wish's bubbletea middleware: it runs the program on the
// session and sends it the window's resizes.
func (s *Server) teaHandler(ph bubbletea.ProgramHandler) ssh.Handler {
	return bubbletea.MiddlewareWithProgramHandler(ph)(func(ssh.Session) {})
}

// teaOptions are wish's input, output, size and colour options for sess.
//
// Without Bubble Tea's signal handler: a session's program runs inside the
// server, where SIGTERM and SIGINT are the server's. With it, each open
// TUI quit on the server's SIGTERM by itself, racing the shutdown: its
// replay was then aborted by the program's end before the server's
// resumable cancel (ErrShutdown) reached it.
func teaOptions(sess ssh.Session) []tea.ProgramOption {
	return append(bubbletea.MakeOptions(sess), tea.WithoutSignalHandler())
}
