package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/connect"
	"github.com/dlqt/dlqt/internal/triage"
)

// connSettings are how a broker is reached, at the config file's top level
// and in each context: TLS for both connections (mgmt_tls overriding it
// for the management API), who logs in and where the secret comes from,
// and the connection timeout. internal/broker/connect turns them into
// connections.
type connSettings struct {
	TLS             connect.TLS `yaml:"tls"`
	MgmtTLS         connect.TLS `yaml:"mgmt_tls"`
	Auth            string      `yaml:"auth"` // plain (default) or external
	User            string      `yaml:"user"`
	PasswordFile    string      `yaml:"password_file"`
	PasswordCommand string      `yaml:"password_command"`
	TokenFile       string      `yaml:"token_file"`
	TokenCommand    string      `yaml:"token_command"`
	ConnectTimeout  string      `yaml:"connect_timeout"` // a duration: 10s
}

// over lays c's set fields over base: a context over the top level.
func (c connSettings) over(base connSettings) connSettings {
	base.TLS = c.TLS.Over(base.TLS)
	base.MgmtTLS = c.MgmtTLS.Over(base.MgmtTLS)
	a := connect.Auth{Mechanism: c.Auth, User: c.User, PasswordFile: c.PasswordFile, PasswordCommand: c.PasswordCommand, TokenFile: c.TokenFile, TokenCommand: c.TokenCommand}
	if a.PasswordFile != "" || a.PasswordCommand != "" || a.TokenFile != "" || a.TokenCommand != "" {
		// a context's secret source replaces the top level's, never joins it
		base.PasswordFile, base.PasswordCommand, base.TokenFile, base.TokenCommand = "", "", "", ""
	}
	b := a.Over(connect.Auth{Mechanism: base.Auth, User: base.User, PasswordFile: base.PasswordFile, PasswordCommand: base.PasswordCommand, TokenFile: base.TokenFile, TokenCommand: base.TokenCommand})
	base.Auth, base.User, base.PasswordFile, base.PasswordCommand, base.TokenFile, base.TokenCommand = b.Mechanism, b.User, b.PasswordFile, b.PasswordCommand, b.TokenFile, b.TokenCommand
	if c.ConnectTimeout != "" {
		base.ConnectTimeout = c.ConnectTimeout
	}
	return base
}

// connFlags are the flags of connSettings.
type connFlags struct {
	tls            connect.TLS
	user           string
	passwordFile   string
	connectTimeout time.Duration
}

func (a *app) bindConnFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&a.cflags.tls.CAFile, "tls-ca-file", "", "PEM file of the CA that signed the broker's certificates, AMQPS and management HTTPS (env DLQT_TLS_CA_FILE; config tls.ca_file)")
	f.StringVar(&a.cflags.tls.CertFile, "tls-cert-file", "", "client certificate (PEM) for brokers that require one, with --tls-key-file (env DLQT_TLS_CERT_FILE; config tls.cert_file)")
	f.StringVar(&a.cflags.tls.KeyFile, "tls-key-file", "", "the client certificate's private key (PEM) (env DLQT_TLS_KEY_FILE; config tls.key_file)")
	f.StringVar(&a.cflags.tls.ServerName, "tls-server-name", "", "name to verify the broker's certificate against when it differs from the URL's host (env DLQT_TLS_SERVER_NAME; config tls.server_name)")
	f.BoolVar(&a.cflags.tls.Insecure, "tls-insecure", false, "do not verify the broker's certificate: anyone on the path can read and change the traffic; journaled (env DLQT_TLS_INSECURE; config tls.insecure)")
	f.StringVar(&a.cflags.user, "user", "", "user to log in as when the URLs name none (env DLQT_USER; config user)")
	f.StringVar(&a.cflags.passwordFile, "password-file", "", "file holding the password (env DLQT_PASSWORD_FILE, or the password itself in DLQT_PASSWORD; config password_file, password_command)")
	f.DurationVar(&a.cflags.connectTimeout, "connect-timeout", 0, "give up on a broker node that does not answer within this long, AMQP and management API alike (env DLQT_CONNECT_TIMEOUT; config connect_timeout; default 10s)")
}

// resolveConn settles the connection settings: flag, then DLQT_*
// variable, then the config file (its context over its top level).
//
// switching is a TUI's switch to another context: the warnings were said.
func (a *app) resolveConn(cmd *cobra.Command, fc connSettings, switching bool) error {
	pick := func(flag, env, file string) string { return firstSet(flag, os.Getenv(env), file) }
	fl := a.cflags
	t := connect.TLS{
		CAFile:     pick(fl.tls.CAFile, "DLQT_TLS_CA_FILE", fc.TLS.CAFile),
		CertFile:   pick(fl.tls.CertFile, "DLQT_TLS_CERT_FILE", fc.TLS.CertFile),
		KeyFile:    pick(fl.tls.KeyFile, "DLQT_TLS_KEY_FILE", fc.TLS.KeyFile),
		ServerName: pick(fl.tls.ServerName, "DLQT_TLS_SERVER_NAME", fc.TLS.ServerName),
		Insecure:   fc.TLS.Insecure,
	}
	if fl.tls.CertFile != "" || fl.tls.KeyFile != "" { // a pair given on the command line stays a pair
		t.CertFile, t.KeyFile = fl.tls.CertFile, fl.tls.KeyFile
	}
	insecure, err := boolSetting(cmd, "tls-insecure", fl.tls.Insecure, "DLQT_TLS_INSECURE", fc.TLS.Insecure)
	if err != nil {
		return usageError{err}
	}
	t.Insecure = insecure
	a.tls, a.mgmtTLS = t, fc.MgmtTLS
	a.auth = connect.Auth{
		Mechanism:       fc.Auth,
		User:            pick(fl.user, "DLQT_USER", fc.User),
		Password:        os.Getenv("DLQT_PASSWORD"),
		PasswordFile:    pick(fl.passwordFile, "DLQT_PASSWORD_FILE", ""),
		PasswordCommand: "",
		TokenFile:       fc.TokenFile,
		TokenCommand:    fc.TokenCommand,
	}
	if a.auth.Password == "" && a.auth.PasswordFile == "" { // the command line and environment win over the file's source
		a.auth.PasswordFile, a.auth.PasswordCommand = fc.PasswordFile, fc.PasswordCommand
	}
	if (a.auth.Password != "" || a.auth.PasswordFile != "") && (fc.TokenFile != "" || fc.TokenCommand != "") {
		a.auth.TokenFile, a.auth.TokenCommand = "", "" // a password given here replaces the file's token
	}
	a.connectTimeout = fl.connectTimeout
	if a.connectTimeout == 0 {
		raw, from := os.Getenv("DLQT_CONNECT_TIMEOUT"), "DLQT_CONNECT_TIMEOUT"
		if raw == "" {
			raw, from = fc.ConnectTimeout, "connect_timeout in "+a.configPath
		}
		if raw != "" {
			if a.connectTimeout, err = time.ParseDuration(raw); err != nil || a.connectTimeout <= 0 {
				return usageError{fmt.Errorf("%s=%q: want a duration such as 10s or 1m", from, raw)}
			}
		}
	}
	if a.connectTimeout < 0 {
		return usageError{fmt.Errorf("--connect-timeout must be positive, got %s", a.connectTimeout)}
	}
	if a.stderr != nil && !switching {
		a.warnInsecure()
		a.warnPasswordOnCommandLine(cmd)
	}
	return nil
}

// boolSetting is a boolean flag when given, else its variable, else the file.
func boolSetting(cmd *cobra.Command, flag string, flagVal bool, env string, file bool) (bool, error) {
	if f := cmd.Flags().Lookup(flag); f != nil && f.Changed {
		return flagVal, nil
	}
	if v := os.Getenv(env); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%s=%q: want true or false", env, v)
		}
		return b, nil
	}
	return file, nil
}

// insecureWarning is said on stderr, on the TUI's status line and in every
// journal entry while certificates are not verified.
const insecureWarning = "WARNING: TLS certificates are NOT verified (--tls-insecure, DLQT_TLS_INSECURE or tls.insecure): anyone on the network path can read and change this session"

func (a *app) tlsInsecure() bool { return a.tls.Insecure || a.mgmtTLS.Insecure }

func (a *app) warnInsecure() {
	if a.tlsInsecure() {
		fmt.Fprintln(a.stderr, "dlqt:", insecureWarning)
	}
}

// warnPasswordOnCommandLine warns when --amqp-url or --mgmt-url carries a
// password: every user of the machine sees a command line (ps). It tells
// the person at the terminal who typed it; a script's stderr keeps its one
// line per failure.
func (a *app) warnPasswordOnCommandLine(cmd *cobra.Command) {
	if f, ok := a.stderr.(*os.File); !ok || f == nil || !term.IsTerminal(f.Fd()) {
		return
	}
	for _, name := range []string{"amqp-url", "mgmt-url"} {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		for _, raw := range connect.SplitNodes(f.Value.String()) {
			if u, err := url.Parse(raw); err == nil && u.User != nil {
				if p, ok := u.User.Password(); ok && !(u.User.Username() == "guest" && p == "guest") { // guest/guest is no secret
					fmt.Fprintf(a.stderr, "dlqt: warning: --%s holds a password, which every user of this machine can read in the process list: use --password-file, DLQT_PASSWORD, password_file or password_command (config), or leave it out to be asked\n", name)
					break
				}
			}
		}
	}
}

// brokerConfig is the resolved settings as the broker package takes them.
func (a *app) brokerConfig() broker.Config {
	return broker.Config{
		AMQPURL: a.amqpURL, MgmtURL: a.mgmtURL, Vhost: a.vhost, Timeout: a.connectTimeout,
		TLS: a.tls, MgmtTLS: a.mgmtTLS, Auth: a.auth, Prompt: a.passwordPrompt(),
	}
}

// passwordPrompt asks for a password without echo on a terminal: never in
// a dlqt serve session, never when stdin is not a terminal. An answer is
// kept for the process (a TUI's context switch does not ask again).
func (a *app) passwordPrompt() func(user string) (string, error) {
	in := a.stdin
	if in == nil {
		in = os.Stdin
	}
	if a.session != nil || !term.IsTerminal(in.Fd()) {
		return nil
	}
	return func(user string) (string, error) {
		if p, ok := a.prompted[user]; ok {
			return p, nil
		}
		fmt.Fprintf(a.stderr, "Password for %s: ", user)
		b, err := term.ReadPassword(in.Fd())
		fmt.Fprintln(a.stderr)
		if err != nil {
			return "", err
		}
		p := strings.TrimRight(string(b), "\r\n")
		if p == "" {
			return "", errors.New("no password given")
		}
		if a.prompted == nil {
			a.prompted = map[string]string{}
		}
		a.prompted[user] = p
		return p, nil
	}
}

// connecting says, while a live broker is dialled, where dlqt is connecting
// and for how long so far, so a silent port is not a blank screen. On a
// terminal the line counts the seconds; done clears it.
func (a *app) connecting(ctx context.Context, where string) (done func()) {
	limit := a.connectTimeout
	if limit == 0 {
		limit = connect.DefaultTimeout
	}
	f, tty := a.stderr.(*os.File)
	if !tty || f == nil || !term.IsTerminal(f.Fd()) {
		return func() {} // a pipe or a log: the line would only clutter it
	}
	start := time.Now()
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			fmt.Fprintf(a.stderr, "\rdlqt: connecting to %s (%ds, up to %s per node)\033[K", where, int(time.Since(start).Seconds()), limit)
			select {
			case <-stop:
				fmt.Fprint(a.stderr, "\r\033[K")
				return
			case <-ctx.Done():
				fmt.Fprint(a.stderr, "\r\033[K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(stop); <-finished }
}

// urlVhostOr is the vhost the first AMQP URL's path names, else def. A
// vhost named both there and by --vhost is settled by connect, which
// refuses two different ones.
func urlVhostOr(amqpURL, def string) string {
	nodes := connect.SplitNodes(amqpURL)
	if len(nodes) == 0 {
		return def
	}
	u, err := url.Parse(nodes[0])
	if err != nil || u.Path == "" || u.Path == "/" {
		return def
	}
	return strings.TrimPrefix(u.Path, "/")
}

// connDetails adds to every journal entry what a reviewer must know about
// how this session reached the broker: tls_insecure when certificates went
// unverified.
func (a *app) connDetails(base map[string]any) map[string]any {
	if !a.tlsInsecure() {
		return base
	}
	d := maps.Clone(base)
	if d == nil {
		d = map[string]any{}
	}
	d["tls_insecure"] = true
	return d
}

// isSnapshotOrDemo says whether r reads a file rather than a broker.
func isSnapshotOrDemo(r triage.Reader) bool {
	_, ok := r.(*broker.Live)
	return !ok
}
