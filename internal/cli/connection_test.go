package cli

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// Every error path of reaching a broker that the command line can walk,
// with a secret planted in each: neither stdout (text or --json), stderr
// nor the journal file carries it. The 401 is the shared broker refusing
// a planted password.
func TestConnectionErrorsPrintNoSecret(t *testing.T) {
	home := isolate(t)
	const secret = "Hunter2-planted"
	cfg := brokertest.NewVhost(t, "secret")
	amqpU, _ := url.Parse(cfg.AMQPURL)
	host := amqpU.Host
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	enc := base64.RawURLEncoding.EncodeToString
	expired := enc([]byte(`{"alg":"RS256"}`)) + "." + enc(fmt.Appendf(nil, `{"sub":%q,"exp":%d}`, secret, time.Now().Add(-time.Hour).Unix())) + "." + enc([]byte(secret))
	journalPath := filepath.Join(home, "journal.db")
	for _, tc := range []struct {
		name   string
		env    map[string]string
		config string
		args   []string
		want   string
	}{
		{name: "bad URL", args: []string{"--amqp-url", "amqps://admin:" + secret + "%@rabbit.example:5671/"}, want: "the password must be percent-encoded"},
		{name: "bad port", args: []string{"--amqp-url", "amqp://admin:" + secret + "@rabbit.example:99999/"}, want: "the port must be a number"},
		{name: "slash in the password", args: []string{"--amqp-url", "amqp://admin:" + secret + "/x@rabbit.example/"}, want: "percent-encode it"},
		{name: "bad CA file", args: []string{"--amqp-url", "amqps://admin:" + secret + "@rabbit.example/", "--tls-ca-file", file("ca.pem", secret)}, want: "holds no PEM certificate"},
		{name: "certificate without key", args: []string{"--amqp-url", "amqps://admin:" + secret + "@rabbit.example/", "--tls-cert-file", file("cert.pem", secret)}, want: "tls.key_file is not"},
		{name: "failing password_command", config: "user: ops\npassword_command: echo " + secret + "; echo nope >&2; exit 3\n",
			args: []string{"--amqp-url", "amqp://rabbit.example/"}, want: "password_command failed (exit status 3): nope"},
		{name: "expired token", config: "token_file: " + file("token", expired) + "\n", args: []string{"--amqp-url", "amqps://rabbit.example/"}, want: "the OAuth2 token expired at"},
		{name: "401", env: map[string]string{"DLQT_PASSWORD": secret, "DLQT_USER": "guest"},
			args: []string{"--amqp-url", "amqp://" + host + "/", "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost}, want: "401 bad credentials for user guest"},
		{name: "401 from a password file", args: []string{"--amqp-url", "amqp://guest@" + host + "/", "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost, "--password-file", file("pw", secret+"\n")},
			want: "401 bad credentials for user guest"},
		{name: "vhost conflict", args: []string{"--amqp-url", "amqp://guest:" + secret + "@" + host + "/other", "--vhost", cfg.Vhost}, want: `the AMQP URL's path names vhost "other"`},
	} {
		for _, json := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s json=%v", tc.name, json), func(t *testing.T) {
				for k, v := range tc.env {
					t.Setenv(k, v)
				}
				configPath := file("config.yaml", tc.config)
				args := append([]string{"--config", configPath, "--journal", journalPath, "queues"}, tc.args...)
				if json {
					args = append(args, "--json")
				}
				stdout, stderr, code := run(t, Assets{}, args...)
				if code == 0 {
					t.Fatalf("exit 0; stdout %q", stdout)
				}
				if !strings.Contains(stderr+stdout, tc.want) {
					t.Errorf("output does not say %q: stdout %q stderr %q", tc.want, stdout, stderr)
				}
				if strings.Contains(stdout+stderr, secret) {
					t.Errorf("the output carries the secret: stdout %q stderr %q", stdout, stderr)
				}
			})
		}
	}
	if data, err := os.ReadFile(journalPath); err == nil && strings.Contains(string(data), secret) {
		t.Error("the journal carries the secret")
	}
}

// Connection settings layer as the others do: flag, then DLQT_* variable,
// then the chosen context, then the file's top level.
func TestConnectionSettingsLayers(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "config.yaml")
	text := `tls: {ca_file: /top/ca.pem, server_name: top-name}
user: top-user
password_file: /top/pw
connect_timeout: 20s
contexts:
  prod:
    amqp_url: amqps://rabbit.prod/payments
    tls: {cert_file: /prod/c.pem, key_file: /prod/k.pem}
    mgmt_tls: {server_name: mgmt-name}
    auth: external
    token_file: /prod/token
    connect_timeout: 30s
`
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	resolve := func(args ...string) *app {
		t.Helper()
		a := &app{}
		cmd := &cobra.Command{Use: "dlqt", RunE: func(*cobra.Command, []string) error { return nil }}
		a.bindFlags(cmd)
		if err := cmd.ParseFlags(append([]string{"--config", conf}, args...)); err != nil {
			t.Fatal(err)
		}
		if err := a.resolve(cmd); err != nil {
			t.Fatal(err)
		}
		return a
	}
	c := resolve().brokerConfig()
	if c.TLS.CAFile != "/top/ca.pem" || c.TLS.ServerName != "top-name" || c.Auth.User != "top-user" || c.Auth.PasswordFile != "/top/pw" || c.Timeout != 20*time.Second {
		t.Errorf("top level: %+v", c)
	}
	t.Setenv("DLQT_TLS_SERVER_NAME", "env-name")
	c = resolve("--context", "prod", "--tls-ca-file", "/flag/ca.pem").brokerConfig()
	want := func(what string, got, want any) {
		if got != want {
			t.Errorf("context prod: %s = %v, want %v", what, got, want)
		}
	}
	want("tls.ca_file", c.TLS.CAFile, "/flag/ca.pem")
	want("tls.server_name", c.TLS.ServerName, "env-name")
	want("tls.cert_file", c.TLS.CertFile, "/prod/c.pem")
	want("mgmt_tls.server_name", c.MgmtTLS.ServerName, "mgmt-name")
	want("auth", c.Auth.Mechanism, "external")
	want("user", c.Auth.User, "top-user")
	want("token_file", c.Auth.TokenFile, "/prod/token")
	want("password_file", c.Auth.PasswordFile, "") // the context's secret source replaces the top level's
	want("connect_timeout", c.Timeout, 30*time.Second)
	want("vhost", c.Vhost, "payments") // the URL's path
	c = resolve("--context", "prod", "--connect-timeout", "3s", "--password-file", "/flag/pw").brokerConfig()
	want("--connect-timeout", c.Timeout, 3*time.Second)
	want("--password-file", c.Auth.PasswordFile, "/flag/pw")
	want("token_file under --password-file", c.Auth.TokenFile, "")
}

// --tls-insecure is loud: a warning on stderr, and every journal entry of
// the session says tls_insecure.
func TestTLSInsecureIsSaidAndJournaled(t *testing.T) {
	home := isolate(t)
	journalPath := filepath.Join(home, "journal.db")
	_, stderr, _ := run(t, Assets{}, "--journal", journalPath, "--tls-insecure", "queues", "--amqp-url", "amqps://127.0.0.1:1/")
	if !strings.Contains(stderr, "WARNING: TLS certificates are NOT verified") {
		t.Errorf("stderr %q says nothing of --tls-insecure", stderr)
	}
	t.Setenv("DLQT_TLS_INSECURE", "true")
	a := &app{}
	cmd := &cobra.Command{Use: "dlqt", RunE: func(*cobra.Command, []string) error { return nil }}
	a.bindFlags(cmd)
	if err := cmd.ParseFlags([]string{"--journal", journalPath}); err != nil {
		t.Fatal(err)
	}
	a.stderr = &strings.Builder{}
	if err := a.resolve(cmd); err != nil {
		t.Fatal(err)
	}
	j, err := a.openJournal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(journal.Entry{Actor: "t", Action: triage.Action("note"), Vhost: "/", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	out, _, code := run(t, Assets{}, "--journal", journalPath, "journal", "export")
	if code != 0 || !strings.Contains(out, `"tls_insecure":true`) {
		t.Errorf("the journal entry does not say tls_insecure (exit %d): %s", code, out)
	}
}

// On a terminal: a user without password is asked, without echo, once per
// process; a password typed into --amqp-url is warned about; the dial
// counts its seconds. Without a terminal there is no prompt.
func TestTerminalPromptAndWarnings(t *testing.T) {
	isolate(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	a := &app{stdin: tty, stderr: tty}
	cmd := &cobra.Command{Use: "dlqt", RunE: func(*cobra.Command, []string) error { return nil }}
	a.bindFlags(cmd)
	if err := cmd.ParseFlags([]string{"--amqp-url", "amqp://ops:typed-in-url@rabbit.example/", "--user", "ops"}); err != nil {
		t.Fatal(err)
	}
	var screen strings.Builder
	ttyFd := int(tty.Fd())
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			screen.Write(buf[:n])
			if strings.Contains(screen.String(), "Password for ops: ") && !strings.Contains(screen.String(), "answered") {
				waitNoEcho(t, ttyFd) // type only once the prompt has turned echo off, as a person would
				_, _ = ptmx.Write([]byte("s3cret-typed\n"))
				screen.WriteString("answered")
			}
			if err != nil {
				return
			}
		}
	}()
	if err := a.resolve(cmd); err != nil {
		t.Fatal(err)
	}
	a.amqpURL, a.mgmtURL = "amqp://rabbit.example/", "http://rabbit.example:15672"
	c := a.brokerConfig()
	if c.Prompt == nil {
		t.Fatal("no prompt on a terminal")
	}
	cc, err := c.Connect()
	if err != nil {
		t.Fatal(err)
	}
	if _, cfg, _ := cc.AMQP(0, "x"); cfg.SASL[0].Response() != "\x00ops\x00s3cret-typed" {
		t.Error("the typed password is not the AMQP password")
	}
	if _, err := a.brokerConfig().Connect(); err != nil { // asked once: the answer is kept
		t.Fatal(err)
	}
	done := a.connecting(t.Context(), "rabbit.example:5672")
	time.Sleep(1200 * time.Millisecond)
	done()
	tty.Close()
	ptmx.Close()
	<-read
	out := screen.String()
	if n := strings.Count(out, "Password for ops: "); n != 1 {
		t.Errorf("asked %d times, want once:\n%s", n, out)
	}
	for _, want := range []string{"--amqp-url holds a password", "connecting to rabbit.example:5672 (1s, up to 10s per node)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal did not show %q:\n%q", want, out)
		}
	}
	if strings.Contains(out, "s3cret-typed") {
		t.Errorf("the password was echoed:\n%q", out)
	}

	// not a terminal: nobody to ask
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if (&app{stdin: f}).passwordPrompt() != nil {
		t.Error("a prompt without a terminal")
	}
}

// waitNoEcho waits until the terminal no longer echoes what is typed.
func waitNoEcho(t *testing.T, fd int) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		st, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err == nil && st.Lflag&unix.ECHO == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Error("the prompt never turned echo off")
}
