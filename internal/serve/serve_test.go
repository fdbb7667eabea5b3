package serve

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	gossh "golang.org/x/crypto/ssh"
)

// fakeRunner stands for the cli: a TUI that greets its user, a command that
// prints who ran it, a journal that lists sessions.
type fakeRunner struct {
	cause   atomic.Pointer[causeOf] // why a "wait" command's context ended
	tuiGate chan struct{}           // when set, a TUI is built once it closes (a slow broker)
	acting  atomic.Bool
	stopped atomic.Int32
	mu      sync.Mutex
	events  []string
}

type causeOf struct{ err error }

// hello greets its user and says the window size Bubble Tea gave it.
type hello struct {
	name string
	size tea.WindowSizeMsg
}

func (h hello) Init() tea.Cmd { return nil }
func (h hello) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if msg.String() == "q" {
			return h, tea.Quit
		}
	case tea.WindowSizeMsg:
		h.size = msg
	}
	return h, nil
}
func (h hello) View() tea.View {
	return tea.NewView(fmt.Sprintf("hello %s [%dx%d]", h.name, h.size.Width, h.size.Height))
}

func (r *fakeRunner) TUI(_ context.Context, s Session) (TUI, error) {
	if r.tuiGate != nil {
		<-r.tuiGate
	}
	return TUI{Model: hello{name: s.User.Name}, Acting: r.acting.Load, Stop: func() { r.stopped.Add(1) }}, nil
}

func (r *fakeRunner) Exec(ctx context.Context, s Session, stdout, _ io.Writer) int {
	if len(s.Command) > 0 && s.Command[0] == "flood" { // output until the client stops reading it
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for ctx.Err() == nil {
			if _, err := stdout.Write(chunk); err != nil {
				return 1
			}
		}
		return 1
	}
	if len(s.Command) > 0 && s.Command[0] == "wait" { // until the server stops it
		fmt.Fprintln(stdout, "waiting")
		<-ctx.Done()
		r.cause.Store(&causeOf{context.Cause(ctx)})
		return 1
	}
	fmt.Fprintf(stdout, "%s %s %s %s", s.User.Name, s.User.Role, strings.Join(s.Command, "|"), s.Fingerprint)
	return 3
}

func (r *fakeRunner) Journal(s Session, start bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%v %s %s", start, s.User.Name, s.Details()["ssh_fingerprint"]))
	return nil
}

func (r *fakeRunner) journaled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

type peer struct {
	signer gossh.Signer
	line   string
}

func newPeer(t *testing.T) peer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return peer{signer: s, line: strings.TrimSpace(string(gossh.MarshalAuthorizedKey(s.PublicKey())))}
}

func usersFile(t *testing.T, path string, users map[string]peer) {
	t.Helper()
	var b strings.Builder
	b.WriteString("users:\n")
	for _, name := range []string{"alice", "bob", "carol"} {
		p, ok := users[name]
		if !ok {
			continue
		}
		role := "operator"
		if name == "bob" {
			role = "viewer"
		}
		fmt.Fprintf(&b, "  - name: %s\n    role: %s\n    keys: [%q]\n", name, role, p.line)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

type bed struct {
	srv   *Server
	run   *fakeRunner
	addr  string
	users string
	peers map[string]peer
	stop  func() error
}

func startBed(t *testing.T, cfg Config) *bed {
	t.Helper()
	dir := t.TempDir()
	b := &bed{run: &fakeRunner{}, users: filepath.Join(dir, "users.yaml"),
		peers: map[string]peer{"alice": newPeer(t), "bob": newPeer(t), "carol": newPeer(t)}}
	usersFile(t, b.users, map[string]peer{"alice": b.peers["alice"], "bob": b.peers["bob"]})
	cfg.UsersPath, cfg.HostKeyPath = b.users, filepath.Join(dir, "state", "host_key")
	if cfg.ShutdownWait == 0 {
		cfg.ShutdownWait = 5 * time.Second
	}
	if _, err := EnsureHostKey(cfg.HostKeyPath); err != nil {
		t.Fatal(err)
	}
	srv, err := New(cfg, b.run)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b.srv, b.addr = srv, ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var once sync.Once
	var serveErr error
	b.stop = func() error {
		once.Do(func() { cancel(); serveErr = <-done })
		return serveErr
	}
	t.Cleanup(func() { b.stop() })
	return b
}

func (b *bed) dial(t *testing.T, who string) (*gossh.Client, error) {
	t.Helper()
	return gossh.Dial("tcp", b.addr, &gossh.ClientConfig{
		User:            "root", // ignored: the key names the user
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(b.peers[who].signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		Timeout:         5 * time.Second,
	})
}

// exec runs command as who and returns its stdout, stderr and exit status.
func (b *bed) exec(t *testing.T, who, command string) (string, string, int) {
	t.Helper()
	c, err := b.dial(t, who)
	if err != nil {
		t.Fatalf("%s: %v", who, err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	s.Stdout, s.Stderr = &out, &errb
	err = s.Run(command)
	var ee *gossh.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitStatus()
	}
	t.Fatalf("%s %q: %v", who, command, err)
	return "", "", -1
}

// tui opens who's TUI on an 80x24 PTY; wait returns once the session ended.
func (b *bed) tui(t *testing.T, who string) (out *syncBuffer, stdin io.Writer, wait func() error) {
	t.Helper()
	out, stdin, _, wait = b.tuiSized(t, who, 80, 24)
	return out, stdin, wait
}

// tuiSized opens who's TUI on a w x h PTY; s resizes it.
func (b *bed) tuiSized(t *testing.T, who string, w, h int) (out *syncBuffer, stdin io.Writer, s *gossh.Session, wait func() error) {
	t.Helper()
	c, err := b.dial(t, who)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err = c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out = &syncBuffer{}
	s.Stdout, s.Stderr = out, out
	if stdin, err = s.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := s.RequestPty("xterm-256color", h, w, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	return out, stdin, s, s.Wait
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
