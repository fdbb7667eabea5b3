package connect

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// secret is planted in every setting that can carry one; no error may
// repeat it (TestErrorsCarryNoSecret).
const secret = "Hunter2"

func TestSplitNodes(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want []string
	}{
		{"amqp://a:5672/", []string{"amqp://a:5672/"}},
		{"amqp://u:p@a:5672, amqp://b:5673 ,amqp://c", []string{"amqp://u:p@a:5672", "amqp://b:5673", "amqp://c"}},
		// A comma inside a password stays part of its URL.
		{"amqp://u:p,w@a:5672/", []string{"amqp://u:p,w@a:5672/"}},
		{"amqp://u:p,w@a/,amqp://b/", []string{"amqp://u:p,w@a/", "amqp://b/"}},
		{"http://a:15672,,", []string{"http://a:15672"}},
	} {
		if got := SplitNodes(tc.raw); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitNodes(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

// plain is the SASL PLAIN login of node i.
func plain(t *testing.T, c *Conn, i int) (user, pass string) {
	t.Helper()
	_, cfg, err := c.AMQP(i, "test")
	if err != nil {
		t.Fatal(err)
	}
	p, ok := cfg.SASL[0].(*amqp.PlainAuth)
	if !ok {
		t.Fatalf("node %d logs in with %s, want PLAIN", i, cfg.SASL[0].Mechanism())
	}
	return p.Username, p.Password
}

func TestNodesInheritTheFirstCredentials(t *testing.T) {
	c, err := New(Settings{AMQPURL: "amqp://alice:s3cret@h1:5672/,amqps://h2:5673/,amqp://bob:x@h3/", MgmtURL: "http://m1:15672,http://m2:15672", Vhost: "pay/ments"})
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, n := range c.Nodes() {
		addrs = append(addrs, n.Addr)
	}
	if want := []string{"h1:5672", "h2:5673", "h3:5672"}; !reflect.DeepEqual(addrs, want) {
		t.Errorf("addrs = %q, want %q", addrs, want)
	}
	for i, want := range [][2]string{{"alice", "s3cret"}, {"alice", "s3cret"}, {"bob", "x"}} {
		if u, p := plain(t, c, i); u != want[0] || p != want[1] {
			t.Errorf("node %d logs in as %s/%s, want %s/%s", i, u, p, want[0], want[1])
		}
	}
	u, cfg, _ := c.AMQP(1, "dlqt browse")
	if u != "amqps://h2:5673/" || cfg.Vhost != "pay/ments" || cfg.TLSClientConfig == nil || cfg.TLSClientConfig.ServerName != "h2" ||
		cfg.Properties["connection_name"] != "dlqt browse" {
		t.Errorf("node 1: %s %+v", u, cfg)
	}
	// The management API takes the AMQP list's credentials unless its own
	// list names some.
	if c.MgmtUser() != "alice" || c.mgmtPass != "s3cret" {
		t.Errorf("management login = %s/%s, want alice/s3cret", c.MgmtUser(), c.mgmtPass)
	}
	c, err = New(Settings{AMQPURL: "amqp://alice:s3cret@h1/", MgmtURL: "http://m1:15672,http://carol:pw@m2:15672/"})
	if err != nil {
		t.Fatal(err)
	}
	if c.MgmtUser() != "carol" || c.mgmtPass != "pw" || c.MgmtNodes()[1].String() != "http://m2:15672" {
		t.Errorf("management login = %s/%s at %s, want carol/pw without user info", c.MgmtUser(), c.mgmtPass, c.MgmtNodes()[1])
	}
}

func TestSettings(t *testing.T) {
	dir := t.TempDir()
	pw := writeFile(t, dir, "pw", "from-file\n")
	ca, cert, key := makeCerts(t, dir)
	for _, tc := range []struct {
		name string
		s    Settings
		// check looks at the result; err, when set, is what the error says
		check func(t *testing.T, c *Conn)
		err   string
	}{
		{name: "guest for localhost only",
			s: Settings{AMQPURL: "amqp://127.0.0.1/", MgmtURL: "http://localhost:15672"},
			check: func(t *testing.T, c *Conn) {
				if u, p := plain(t, c, 0); u != "guest" || p != "guest" {
					t.Errorf("login %s/%s", u, p)
				}
			}},
		{name: "no user for a remote broker", s: Settings{AMQPURL: "amqps://rabbit.prod:5671/", MgmtURL: "https://rabbit.prod:15671"},
			err: "no user is set for rabbit.prod:5671: set user and password_file"},
		{name: "user with a password file",
			s: Settings{AMQPURL: "amqps://rabbit.prod/", MgmtURL: "https://rabbit.prod:15671", Auth: Auth{User: "ops", PasswordFile: pw}},
			check: func(t *testing.T, c *Conn) {
				if u, p := plain(t, c, 0); u != "ops" || p != "from-file" {
					t.Errorf("login %s/%s", u, p)
				}
				if c.Nodes()[0].Addr != "rabbit.prod:5671" {
					t.Errorf("addr %s", c.Nodes()[0].Addr)
				}
			}},
		{name: "URL user, password from a command",
			s: Settings{AMQPURL: "amqp://ops@rabbit.prod/", MgmtURL: "http://rabbit.prod:15672", Auth: Auth{PasswordCommand: "printf ' from-cmd \\n'"}},
			check: func(t *testing.T, c *Conn) {
				if u, p := plain(t, c, 0); u != "ops" || p != "from-cmd" {
					t.Errorf("login %s/%q", u, p)
				}
			}},
		{name: "a prompt for a user without password",
			s: Settings{AMQPURL: "amqp://rabbit.prod/", MgmtURL: "http://rabbit.prod:15672", Auth: Auth{User: "ops"},
				Prompt: func(user string) (string, error) { return "typed-" + user, nil }},
			check: func(t *testing.T, c *Conn) {
				if u, p := plain(t, c, 0); u != "ops" || p != "typed-ops" || c.mgmtPass != "typed-ops" {
					t.Errorf("login %s/%s, management %s", u, p, c.mgmtPass)
				}
			}},
		{name: "a user without password and nobody to ask",
			s:   Settings{AMQPURL: "amqp://rabbit.prod/", MgmtURL: "http://rabbit.prod:15672", Auth: Auth{User: "ops"}},
			err: "user ops has no password for rabbit.prod:5672: set password_file (--password-file)"},
		{name: "two password sources", s: Settings{AMQPURL: "amqp://h/", MgmtURL: "http://h", Auth: Auth{User: "u", Password: "a", PasswordFile: pw}},
			err: "more than one password source"},
		{name: "unknown mechanism", s: Settings{AMQPURL: "amqp://h/", MgmtURL: "http://h", Auth: Auth{Mechanism: "kerberos"}}, err: `auth: "kerberos"`},
		{name: "a key without a certificate", s: Settings{AMQPURL: "amqps://h/", MgmtURL: "http://h", TLS: TLS{KeyFile: key}},
			err: "tls.key_file is set but tls.cert_file is not"},
		{name: "a certificate without a key", s: Settings{AMQPURL: "amqps://h/", MgmtURL: "http://h", TLS: TLS{CertFile: cert}},
			err: "tls.cert_file is set but tls.key_file is not"},
		{name: "the URL's certfile without keyfile", s: Settings{AMQPURL: "amqps://u:p@h/?certfile=" + cert, MgmtURL: "http://h"},
			err: "?certfile= and ?keyfile= go together"},
		{name: "the URL's TLS files are used",
			s: Settings{AMQPURL: "amqps://u:p@h/?cacertfile=" + ca + "&certfile=" + cert + "&keyfile=" + key + "&server_name_indication=rabbit&heartbeat=7&connection_timeout=1500", MgmtURL: "http://h"},
			check: func(t *testing.T, c *Conn) {
				_, cfg, err := c.AMQP(0, "x")
				if err != nil {
					t.Fatal(err)
				}
				tc := cfg.TLSClientConfig
				if tc.RootCAs == nil || len(tc.Certificates) != 1 || tc.ServerName != "rabbit" || cfg.Heartbeat != 7*time.Second || c.Nodes()[0].Timeout() != 1500*time.Millisecond {
					t.Errorf("config %+v, timeout %s", cfg, c.Nodes()[0].Timeout())
				}
			}},
		{name: "a connection_timeout that is no number", s: Settings{AMQPURL: "amqp://u:p@h/?connection_timeout=10s", MgmtURL: "http://h"},
			err: "connection_timeout= must be a positive whole number of milliseconds"},
		{name: "a CA file that is missing", s: Settings{AMQPURL: "amqps://u:p@h/", MgmtURL: "http://h", TLS: TLS{CAFile: filepath.Join(dir, "nope.pem")}},
			err: "tls.ca_file: " + filepath.Join(dir, "nope.pem") + ": no such file"},
		{name: "a CA file that is not PEM", s: Settings{AMQPURL: "amqps://u:p@h/", MgmtURL: "http://h", TLS: TLS{CAFile: pw}},
			err: "holds no PEM certificate"},
		{name: "mgmt_tls overrides tls for the management API",
			s: Settings{AMQPURL: "amqps://u:p@h/", MgmtURL: "https://h", TLS: TLS{CAFile: ca, ServerName: "amqp-name"}, MgmtTLS: TLS{ServerName: "mgmt-name", CertFile: cert, KeyFile: key}},
			check: func(t *testing.T, c *Conn) {
				m := c.MgmtTLS()
				if m.CAFile != ca || m.ServerName != "mgmt-name" || m.CertFile != cert {
					t.Errorf("management TLS %+v", m)
				}
				_, cfg, _ := c.AMQP(0, "x")
				if cfg.TLSClientConfig.ServerName != "amqp-name" || len(cfg.TLSClientConfig.Certificates) != 0 {
					t.Errorf("AMQP TLS %+v", cfg.TLSClientConfig)
				}
			}},
		{name: "EXTERNAL needs a client certificate", s: Settings{AMQPURL: "amqps://h/", MgmtURL: "https://u:p@h", Auth: Auth{Mechanism: "external"}},
			err: "auth: external logs in with a client certificate: set tls.cert_file and tls.key_file"},
		{name: "EXTERNAL needs TLS", s: Settings{AMQPURL: "amqp://h/", MgmtURL: "https://u:p@h", Auth: Auth{Mechanism: "external"}},
			err: "auth: external needs TLS"},
		{name: "EXTERNAL: the management API still needs a user",
			s:   Settings{AMQPURL: "amqps://rabbit.prod/", MgmtURL: "https://rabbit.prod:15671", Auth: Auth{Mechanism: "external"}, TLS: TLS{CertFile: cert, KeyFile: key}},
			err: "auth: external covers AMQP only; the management API needs a user and password too"},
		{name: "EXTERNAL on localhost: no silent guest for the management API",
			s:   Settings{AMQPURL: "amqps://127.0.0.1/", MgmtURL: "https://127.0.0.1:15671", Auth: Auth{Mechanism: "external"}, TLS: TLS{CertFile: cert, KeyFile: key}},
			err: "auth: external covers AMQP only"},
		{name: "EXTERNAL with a management user",
			s: Settings{AMQPURL: "amqps://rabbit.prod/?auth_mechanism=external", MgmtURL: "https://rabbit.prod:15671", Auth: Auth{User: "ops", PasswordFile: pw}, TLS: TLS{CertFile: cert, KeyFile: key}},
			check: func(t *testing.T, c *Conn) {
				_, cfg, _ := c.AMQP(0, "x")
				if cfg.SASL[0].Mechanism() != "EXTERNAL" || c.MgmtUser() != "ops" || c.mgmtPass != "from-file" {
					t.Errorf("SASL %s, management %s/%s", cfg.SASL[0].Mechanism(), c.MgmtUser(), c.mgmtPass)
				}
			}},
		{name: "the URL path's vhost is used", s: Settings{AMQPURL: "amqp://u:p@h/orders", MgmtURL: "http://h"},
			check: func(t *testing.T, c *Conn) {
				if c.Vhost != "orders" {
					t.Errorf("vhost %q", c.Vhost)
				}
			}},
		{name: "%2F in the URL path is vhost /", s: Settings{AMQPURL: "amqp://u:p@h/%2F", MgmtURL: "http://h", Vhost: "/"},
			check: func(t *testing.T, c *Conn) {
				if c.Vhost != "/" {
					t.Errorf("vhost %q", c.Vhost)
				}
			}},
		{name: "a URL vhost that conflicts with the setting", s: Settings{AMQPURL: "amqp://u:p@h/orders", MgmtURL: "http://h", Vhost: "payments"},
			err: `the AMQP URL's path names vhost "orders" but the vhost setting (--vhost, DLQT_VHOST or vhost) is "payments"`},
		{name: "a management URL of another scheme", s: Settings{AMQPURL: "amqp://u:p@h/", MgmtURL: "amqp://h"}, err: "want http://host:15672"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.s)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to say %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

// A URL that does not parse is described, never echoed: Go's own error
// repeats the whole URL, password included.
func TestBadURLsAreDescribed(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"amqps://admin:" + secret + "%@rabbit:5671/", "bad AMQP URL amqps://admin:xxxxx@rabbit:5671/: it holds a % that starts no escape; the password must be percent-encoded: @ → %40, / → %2F, % → %25"},
		{"amqp://admin:" + secret + "/x@rabbit/", "bad AMQP URL amqp://admin:xxxxx@rabbit/: the port is not a number"},
		{"amqp://admin:" + secret + "@rabbit:99999/", "bad AMQP URL amqp://admin:xxxxx@rabbit:99999/: the port must be a number from 1 to 65535"},
		{"rabbit:5672", "want amqp:// or amqps://"},
		{"//admin:" + secret + "@rabbit/", "want amqp:// or amqps://"},
		{"http://admin:" + secret + "@rabbit/", "want amqp:// or amqps://"},
	} {
		_, err := New(Settings{AMQPURL: tc.raw, MgmtURL: "http://h"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.raw, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error shows the password: %v", tc.raw, err)
		}
	}
}

// Every error path reachable from the settings, with the secret planted
// wherever it can be: none of the errors repeats it.
func TestErrorsCarryNoSecret(t *testing.T) {
	dir := t.TempDir()
	pw := writeFile(t, dir, "pw", secret)
	_, cert, key := makeCerts(t, dir)
	expired := writeFile(t, dir, "expired", jwt(t, time.Now().Add(-time.Hour), secret))
	badCA := writeFile(t, dir, "ca", "-----BEGIN CERTIFICATE-----\n"+secret+"\n-----END CERTIFICATE-----\n")
	for _, s := range []Settings{
		{AMQPURL: "amqps://admin:" + secret + "%@rabbit:5671/", MgmtURL: "http://h"},
		{AMQPURL: "amqp://admin:" + secret + "@rabbit:0/", MgmtURL: "http://h"},
		{AMQPURL: "amqp://admin:" + secret + "/@rabbit/", MgmtURL: "http://h"},
		{AMQPURL: "amqp://h/", MgmtURL: "http://admin:" + secret + "%zz@h"},
		{AMQPURL: "amqps://admin:" + secret + "@h/?certfile=" + cert, MgmtURL: "http://h"},
		{AMQPURL: "amqps://admin:" + secret + "@h/?connection_timeout=" + secret, MgmtURL: "http://h"},
		{AMQPURL: "amqps://admin:" + secret + "@h/", MgmtURL: "https://h", TLS: TLS{CAFile: badCA}},
		{AMQPURL: "amqps://admin:" + secret + "@h/", MgmtURL: "https://h", TLS: TLS{CAFile: pw}},
		{AMQPURL: "amqps://admin:" + secret + "@h/", MgmtURL: "https://h", TLS: TLS{CertFile: pw, KeyFile: key}},
		{AMQPURL: "amqps://admin:" + secret + "@h/", MgmtURL: "https://h", TLS: TLS{CertFile: cert}},
		{AMQPURL: "amqp://rabbit.prod/", MgmtURL: "http://rabbit.prod", Auth: Auth{User: "ops", PasswordCommand: "echo " + secret + "; exit 3"}},
		{AMQPURL: "amqp://rabbit.prod/", MgmtURL: "http://rabbit.prod", Auth: Auth{User: "ops", PasswordCommand: "yes " + secret}},
		{AMQPURL: "amqp://rabbit.prod/", MgmtURL: "http://rabbit.prod", Auth: Auth{User: "ops", PasswordCommand: "printf ''"}},
		{AMQPURL: "amqp://rabbit.prod/", MgmtURL: "http://rabbit.prod", Auth: Auth{TokenFile: expired}},
		{AMQPURL: "amqp://rabbit.prod/", MgmtURL: "http://rabbit.prod", Auth: Auth{TokenCommand: "cat " + expired}},
		{AMQPURL: "amqp://rabbit.prod/", MgmtURL: "http://rabbit.prod", Auth: Auth{User: "ops", Password: secret, TokenFile: expired}},
		{AMQPURL: "amqp://x:" + secret + "@rabbit.prod/orders", MgmtURL: "http://rabbit.prod", Vhost: "payments"},
	} {
		_, err := New(s)
		if err == nil {
			t.Errorf("%+v: no error", s.Auth)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(fmt.Sprintf("%#v", err), secret) {
			t.Errorf("the error carries the secret: %v", err)
		}
	}
}

func TestTokens(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	f := writeFile(t, dir, "tok", jwt(t, at, "x"))
	_, err := New(Settings{AMQPURL: "amqps://rabbit.prod/", MgmtURL: "https://rabbit.prod", Auth: Auth{TokenFile: f}})
	if want := "the OAuth2 token expired at 2026-11-30T08:00:00Z"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	var ex *ExpiredTokenError
	if !errors.As(err, &ex) {
		t.Error("not an ExpiredTokenError")
	}

	first, second := jwt(t, time.Now().Add(time.Hour), "first"), jwt(t, time.Now().Add(time.Hour), "second")
	writeFile(t, dir, "tok", first)
	c, err := New(Settings{AMQPURL: "amqps://rabbit.prod/", MgmtURL: "https://rabbit.prod", Auth: Auth{TokenFile: f}})
	if err != nil {
		t.Fatal(err)
	}
	if u, p := plain(t, c, 0); u != "dlqt" || p != first {
		t.Errorf("AMQP login %s/%s, want the token as password", u, p)
	}
	// a reconnect reads the token again
	writeFile(t, dir, "tok", second)
	if _, p := plain(t, c, 0); p != second {
		t.Error("the reconnect did not read the token again")
	}

	// The management API: Bearer, and one more try with the token read
	// again after a 401.
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "Bearer "+first {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("{}"))
	}))
	defer srv.Close()
	c, err = New(Settings{AMQPURL: "amqp://127.0.0.1/", MgmtURL: srv.URL, Auth: Auth{TokenFile: f}})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := c.HTTPTransport()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "tok", first)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/whoami", nil)
	req.SetBasicAuth("someone", "else") // a client library's own header is replaced
	res, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || !reflect.DeepEqual(seen, []string{"Bearer " + second, "Bearer " + first}) {
		t.Errorf("status %d, headers %q, want the stale token then the re-read one", res.StatusCode, seen)
	}
}

// A TLS peer (not a broker): the handshake errors dlqt meets get hints
// that name the setting to change.
func TestTLSHints(t *testing.T) {
	dir := t.TempDir()
	ca, cert, key := makeCerts(t, dir)
	serverPair, err := tls.LoadX509KeyPair(cert, key) // the same leaf serves both sides here
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pem, _ := os.ReadFile(ca)
	pool.AppendCertsFromPEM(pem)
	listen := func(t *testing.T, require bool) string {
		cfg := &tls.Config{Certificates: []tls.Certificate{serverPair}, ClientCAs: pool, MinVersion: tls.VersionTLS12}
		if require {
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
		}
		ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					_ = c.(*tls.Conn).Handshake()
					buf := make([]byte, 64)
					_, _ = c.Read(buf)
					c.Close()
				}()
			}
		}()
		return ln.Addr().String()
	}
	dialHint := func(t *testing.T, scheme, addr string, s TLS) string {
		c, err := New(Settings{AMQPURL: scheme + "://u:p@" + addr + "/", MgmtURL: "http://127.0.0.1", TLS: s, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		u, cfg, err := c.AMQP(0, "x")
		if err != nil {
			t.Fatal(err)
		}
		conn, err := amqp.DialConfig(u, cfg)
		if err == nil {
			conn.Close()
			t.Fatal("the dial worked")
		}
		return c.HintAMQP(0, err)
	}
	addr := listen(t, false)
	if h := dialHint(t, "amqps", addr, TLS{}); !strings.Contains(h, "tls.ca_file") {
		t.Errorf("unknown authority: hint %q", h)
	}
	if h := dialHint(t, "amqps", addr, TLS{CAFile: ca, ServerName: "elsewhere"}); !strings.Contains(h, "tls.server_name") {
		t.Errorf("wrong name: hint %q", h)
	}
	if h := dialHint(t, "amqp", addr, TLS{}); !strings.Contains(h, "amqps://") {
		t.Errorf("amqp:// to a TLS port: hint %q", h)
	}
	strict := listen(t, true)
	if h := dialHint(t, "amqps", strict, TLS{CAFile: ca}); !strings.Contains(h, "tls.cert_file") {
		t.Errorf("no client certificate: hint %q", h)
	}
	// amqps:// to a port that does not speak TLS
	plainLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer plainLn.Close()
	go func() {
		c, err := plainLn.Accept()
		if err == nil {
			_, _ = c.Write([]byte("AMQP\x00\x00\x09\x01"))
			c.Close()
		}
	}()
	if h := dialHint(t, "amqps", plainLn.Addr().String(), TLS{}); !strings.Contains(h, "amqp:// port") {
		t.Errorf("amqps:// to a plain port: hint %q", h)
	}
}

// A port that accepts and never answers is given up on after the
// connection timeout, AMQP and HTTP alike.
func TestSilentPortTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			defer c.Close()
		}
	}()
	addr := ln.Addr().String()
	c, err := New(Settings{AMQPURL: "amqp://u:p@" + addr + "/", MgmtURL: "https://u:p@" + addr, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	u, cfg, _ := c.AMQP(0, "x")
	conn, err := amqp.DialConfig(u, cfg)
	if err == nil {
		conn.Close()
		t.Fatal("AMQP dial to a silent port worked")
	}
	// amqp091 says a read timeout as a frame error: it is a timeout, not a
	// TLS port answering
	if !IsTimeout(err) || c.HintAMQP(0, err) != "" {
		t.Errorf("AMQP: %v: timeout %v, hint %q", err, IsTimeout(err), c.HintAMQP(0, err))
	}
	rt, err := c.HTTPTransport()
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/api/whoami", nil)
	if res, err := rt.RoundTrip(req); err == nil {
		res.Body.Close()
		t.Fatal("HTTPS to a silent port worked")
	}
	if d := time.Since(start); d > 3*time.Second || accepted.Load() < 2 {
		t.Errorf("gave up after %s with %d connections accepted, want both bounded by the 300ms timeout", d, accepted.Load())
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// jwt is an unsigned token with exp and a sub; dlqt never verifies it.
func jwt(t *testing.T, exp time.Time, sub string) string {
	t.Helper()
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc(fmt.Appendf(nil, `{"sub":%q,"exp":%d}`, sub, exp.Unix())) + "." + enc([]byte("sig"))
}

// makeCerts writes a CA and a certificate it signed for 127.0.0.1 and
// localhost (server and client use), with its key.
func makeCerts(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "dlqt"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(leafKey)
	pemOf := func(typ string, der []byte) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
	}
	return writeFile(t, dir, "ca.pem", pemOf("CERTIFICATE", caDER)), writeFile(t, dir, "cert.pem", pemOf("CERTIFICATE", leafDER)), writeFile(t, dir, "key.pem", pemOf("PRIVATE KEY", keyDER))
}
