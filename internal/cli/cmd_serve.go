package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	gossh "golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/serve"
	"github.com/dlqt/dlqt/internal/ui"
)

func defaultHostKeyPath() string {
	return xdgPath("XDG_STATE_HOME", ".local/state", "ssh_host_ed25519_key")
}

func defaultUsersPath() string { return xdgPath("XDG_CONFIG_HOME", ".config", "users.yaml") }

func (a *app) serveCommand() *cobra.Command {
	cfg := serve.Config{Log: a.stderr, ShutdownWait: 20 * time.Second,
		ShowCommand: func(args []string) []string { return recordedCommand(args, a.redactor()) }}
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDR] [--host-key FILE] [--users FILE]",
		Short: "Serve the TUI and the headless commands over SSH, one name and role per key",
		Long: `dlqt serve is an SSH server: each person connects with their own key,
named in the users file with a role (viewer or operator), and gets their own
TUI, or runs a headless command with ssh HOST -- groups QUEUE --json. The
server holds the broker credentials and the journal; every entry names the
user and carries the key's fingerprint and the client's address. SIGHUP
re-reads the users file; SIGTERM ends running replays safely, then sessions.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("operator-sessions") { // a small --max-sessions keeps one for anyone
				cfg.OperatorSessions = max(min(cfg.OperatorSessions, cfg.MaxSessions-1), 0)
			}
			return a.runServe(cmd, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:2222", "address to listen on")
	f.StringVar(&cfg.HostKeyPath, "host-key", defaultHostKeyPath(), "ed25519 host key, generated (mode 0600) if missing")
	f.StringVar(&cfg.UsersPath, "users", defaultUsersPath(), "users file: name, role and keys of each person")
	f.IntVar(&cfg.MaxSessions, "max-sessions", 16, "sessions open at once; more are refused")
	f.IntVar(&cfg.MaxSessionsPerUser, "max-sessions-per-user", 4, "sessions one user may have open at once")
	f.IntVar(&cfg.OperatorSessions, "operator-sessions", 2, "of --max-sessions, how many only operators may take")
	f.DurationVar(&cfg.IdleTimeout, "idle-timeout", 30*time.Minute, "close a TUI after this long without a key (a running replay keeps it open), and a headless command whose output is not read for this long; 0 never")
	f.DurationVar(&cfg.HandshakeTimeout, "handshake-timeout", 20*time.Second, "time a connection has to authenticate")
	f.IntVar(&cfg.MaxUnauthenticated, "max-unauthenticated", 32, "connections authenticating at once; one more closes the oldest")
	return cmd
}

func (a *app) runServe(cmd *cobra.Command, cfg serve.Config) error {
	if err := checkServeLimits(cfg); err != nil {
		return usageError{err}
	}
	keys, err := ui.LoadKeyMap(a.assets.Keymap, a.keymap)
	if err != nil {
		return usageError{fmt.Errorf("key bindings: %w", err)}
	}
	signer, err := serve.HostSigner(cfg.HostKeyPath)
	if err != nil {
		return err
	}
	a.hostSigner = signer // signs the decisions of its sessions
	fp := gossh.FingerprintSHA256(signer.PublicKey())
	j, err := a.openJournal() // the server's: every session writes through it
	if err != nil {
		return fmt.Errorf("dlqt serve needs its journal: %w", err)
	}
	runner := &serveRunner{a: a, keys: keys, journal: j.Shared}
	srv, err := serve.New(cfg, runner)
	if err != nil {
		return usageError{err}
	}
	runner.users = srv.Users // approvals in a session check the users the server has in force
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "dlqt serve: listening on %s, host key %s, %d users from %s, broker %s vhost %s, journal %s\n",
		ln.Addr(), fp, len(srv.Users().List()), cfg.UsersPath, redactedURL(a.amqpURL), a.vhost, a.journalPath)
	stop := a.reloadOnHangup(cmd.Context(), srv)
	defer stop()
	return srv.Serve(cmd.Context(), ln)
}

// reloadOnHangup re-reads the users file on each SIGHUP and says what came
// of it; a bad file keeps the users in force.
func (a *app) reloadOnHangup(ctx context.Context, srv *serve.Server) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	hangupReloads.Store(true) // not an interrupt (Interrupts)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			if err := srv.Reload(); err != nil {
				fmt.Fprintln(a.stderr, "dlqt serve: SIGHUP:", err)
				continue
			}
			fmt.Fprintf(a.stderr, "dlqt serve: SIGHUP: %d users from %s\n", len(srv.Users().List()), srv.Users().Path)
		}
	}()
	return func() { signal.Stop(hup); hangupReloads.Store(false); cancel() }
}

// checkServeLimits refuses limits that leave nobody a session, or that
// leave a connection no bound on its handshake.
func checkServeLimits(cfg serve.Config) error {
	switch {
	case cfg.MaxSessions < 1:
		return fmt.Errorf("--max-sessions must be at least 1, got %d", cfg.MaxSessions)
	case cfg.MaxSessionsPerUser < 1:
		return fmt.Errorf("--max-sessions-per-user must be at least 1, got %d", cfg.MaxSessionsPerUser)
	case cfg.OperatorSessions < 0 || cfg.OperatorSessions >= cfg.MaxSessions:
		return fmt.Errorf("--operator-sessions must be from 0 to --max-sessions - 1 (%d), got %d", cfg.MaxSessions-1, cfg.OperatorSessions)
	case cfg.HandshakeTimeout <= 0 || cfg.HandshakeTimeout > 30*time.Second:
		return fmt.Errorf("--handshake-timeout must be more than 0 and at most 30s, got %s", cfg.HandshakeTimeout)
	case cfg.MaxUnauthenticated < 1:
		return fmt.Errorf("--max-unauthenticated must be at least 1, got %d", cfg.MaxUnauthenticated)
	}
	return nil
}
