package connect

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"
)

// A credential helper (password_command, token_command) gets this long and
// may print this much; its stdout, trimmed, is the secret.
const (
	helperTimeout = 30 * time.Second
	helperMaxOut  = 64 << 10
)

// readSecretFile reads a password or token file: its content without the
// trailing newline. The error names the file, never its content.
func readSecretFile(path, setting string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: %v", setting, pathErr(err, path))
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(&limited{r: f, n: helperMaxOut + 1}); err != nil {
		return "", fmt.Errorf("%s %s: cannot read it: %v", setting, path, errors.Unwrap(err))
	}
	if buf.Len() > helperMaxOut {
		return "", fmt.Errorf("%s %s: larger than %d KiB, so not a password or token", setting, path, helperMaxOut>>10)
	}
	s := strings.TrimRight(buf.String(), "\r\n")
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%s %s is empty", setting, path)
	}
	return s, nil
}

// pathErr is an os error said without Go's "open PATH:" prefix doubled.
func pathErr(err error, path string) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", path, pe.Err)
	}
	return err
}

type limited struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errEOF
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= n
	return n, err
}

var (
	errEOF     = io.EOF
	errTooMuch = errors.New("too much output")
)

// runHelper runs a credential helper through sh -c and returns its stdout,
// trimmed. Its error says how it failed and the last line it wrote to
// stderr, never its stdout (which is, or holds, the secret).
func runHelper(command, setting string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), helperTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	var out capped
	var stderr capped
	out.max, stderr.max = helperMaxOut, 4<<10
	cmd.Stdout, cmd.Stderr = &out, &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	switch {
	case out.over:
		return "", fmt.Errorf("%s printed more than %d KiB, so not a password or token", setting, helperMaxOut>>10)
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s did not finish within %s", setting, helperTimeout)
	case err != nil:
		msg := fmt.Sprintf("%s failed (%v)", setting, exitText(err))
		if line := lastLine(stderr.buf.String()); line != "" {
			msg += ": " + line
		}
		return "", errors.New(msg)
	}
	s := strings.TrimSpace(out.buf.String())
	if s == "" {
		return "", fmt.Errorf("%s printed nothing on stdout", setting)
	}
	return s, nil
}

func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	return err.Error()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200] + "…"
	}
	return l
}

type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return 0, errTooMuch // closes the pipe: the helper stops instead of running to the timeout
	}
	return c.buf.Write(p)
}

// passwordFromSource is the password of the configured source, read once.
// ok is false when no source is set.
func (c *Conn) passwordFromSource() (pass string, ok bool, err error) {
	if c.password != nil {
		return *c.password, true, nil
	}
	a := c.s.Auth
	switch {
	case a.Password != "":
		pass = a.Password
	case a.PasswordFile != "":
		pass, err = readSecretFile(a.PasswordFile, "password_file")
	case a.PasswordCommand != "":
		pass, err = runHelper(a.PasswordCommand, "password_command")
	default:
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	c.password = &pass
	return pass, true, nil
}

// readToken reads the OAuth2 token afresh and refuses one that has expired.
func (c *Conn) readToken() (string, error) {
	a := c.s.Auth
	var tok string
	var err error
	if a.TokenFile != "" {
		tok, err = readSecretFile(a.TokenFile, "token_file")
	} else {
		tok, err = runHelper(a.TokenCommand, "token_command")
	}
	if err != nil {
		return "", err
	}
	tok = strings.TrimSpace(tok)
	if exp, ok := tokenExpiry(tok); ok && !exp.After(time.Now()) {
		return "", &ExpiredTokenError{At: exp}
	}
	return tok, nil
}

// ExpiredTokenError is an OAuth2 token past its exp claim.
type ExpiredTokenError struct{ At time.Time }

func (e *ExpiredTokenError) Error() string {
	return "the OAuth2 token expired at " + e.At.UTC().Format(time.RFC3339) + ": get a fresh one (token_file, token_command)"
}

// tokenExpiry reads a JWT's exp claim without verifying the token (the
// broker verifies it); ok is false for a token that is not a JWT or has
// no exp.
func tokenExpiry(tok string) (time.Time, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	if json.Unmarshal(raw, &claims) != nil || claims.Exp == "" {
		return time.Time{}, false
	}
	f, err := claims.Exp.Float64()
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(int64(f), 0), true
}

// Token is the current OAuth2 token ("" when none is configured).
func (c *Conn) Token() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// Refresh re-reads the OAuth2 token (before a reconnect, after a 401). It
// does nothing without a token source.
func (c *Conn) Refresh() error {
	if !c.s.Auth.HasToken() {
		return nil
	}
	tok, err := c.readToken()
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.token = tok
	c.mu.Unlock()
	return nil
}

// login settles a user and password: the URL's when it has both, else the
// URL's or the configured user with the password source (or a prompt),
// else guest/guest for a broker on this machine only.
//
// guest is refused when guestOK is false: with auth: external the
// certificate is the identity, and a silent guest login for the
// management API would go unnoticed until production.
func (c *Conn) login(ui *url.Userinfo, where string, guestOK bool) (user, pass string, err error) {
	if ui != nil {
		if p, ok := ui.Password(); ok {
			return ui.Username(), p, nil
		}
		user = ui.Username()
	}
	if user == "" {
		user = c.s.Auth.User
	}
	pass, ok, err := c.passwordFromSource()
	if err != nil {
		return "", "", err
	}
	switch {
	case user != "" && ok:
		return user, pass, nil
	case user != "" && c.s.Prompt != nil:
		p, err := c.s.Prompt(user)
		if err != nil {
			return "", "", fmt.Errorf("password for %s: %v", user, err)
		}
		c.password = &p
		return user, p, nil
	case user != "":
		return "", "", fmt.Errorf("user %s has no password for %s: set password_file (--password-file), password_command or DLQT_PASSWORD, or run dlqt on a terminal to be asked", user, where)
	case ok:
		return "", "", fmt.Errorf("a password is set but no user for %s: set user (or name the user in the URL)", where)
	case guestOK && c.allLocal():
		return "guest", "guest", nil
	}
	return "", "", fmt.Errorf("no user is set for %s: set user and password_file (--password-file, password_command or DLQT_PASSWORD), or auth: external with a client certificate; dlqt falls back to guest/guest only for a broker on localhost", where)
}

// allLocal says whether every node is on this machine, the only place
// RabbitMQ lets guest log in.
func (c *Conn) allLocal() bool {
	hosts := []string{}
	for _, n := range c.nodes {
		hosts = append(hosts, n.host)
	}
	for _, u := range c.mgmt {
		hosts = append(hosts, u.Hostname())
	}
	for _, h := range hosts {
		if h == "localhost" {
			continue
		}
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return false
		}
	}
	return true
}

// credentials settles every node's credentials up front, so a missing
// password is said before anything is dialled.
func (c *Conn) credentials() error {
	if c.s.Auth.HasToken() {
		if err := c.Refresh(); err != nil {
			return err
		}
		user := c.s.Auth.User
		if user == "" {
			user = "dlqt" // the OAuth2 backend takes the user from the token
		}
		c.amqpUser, c.mgmtUser = user, user
		return nil
	}
	for i := range c.nodes {
		n := &c.nodes[i]
		if c.external || n.external {
			n.external = true
			if n.Scheme != "amqps" {
				return fmt.Errorf("auth: external needs TLS: %s is an amqp:// URL, use amqps://", n.Addr)
			}
			if n.tls.CertFile == "" {
				return fmt.Errorf("auth: external logs in with a client certificate: set tls.cert_file and tls.key_file (--tls-cert-file, --tls-key-file) for %s", n.Addr)
			}
		}
	}
	where := "the broker"
	if len(c.nodes) > 0 {
		where = c.nodes[0].Addr
	}
	if !c.nodes[0].external {
		var ui *url.Userinfo
		if c.nodes[0].hasUser {
			ui = userinfo(c.nodes[0].user, c.nodes[0].pass)
		}
		u, p, err := c.login(ui, where, true)
		if err != nil {
			return err
		}
		c.amqpUser, c.amqpPass = u, p
	}
	// The management API takes its own URL's user; else, with a password
	// login, the AMQP one; with EXTERNAL it still needs a user and password.
	var ui *url.Userinfo
	switch {
	case c.mgmtFromURL:
		ui = userinfo(c.mgmtUser, c.mgmtPass)
	case !c.nodes[0].external:
		ui = url.UserPassword(c.amqpUser, c.amqpPass)
	}
	u, p, err := c.login(ui, "the management API at "+c.mgmt[0].Host, !c.nodes[0].external)
	if err != nil {
		if c.nodes[0].external {
			return fmt.Errorf("auth: external covers AMQP only; the management API needs a user and password too (user with password_file or password_command, or in the management URL): %w", err)
		}
		return err
	}
	c.mgmtUser, c.mgmtPass = u, p
	return nil
}

func userinfo(user, pass string) *url.Userinfo {
	if pass == "" {
		return url.User(user)
	}
	return url.UserPassword(user, pass)
}
