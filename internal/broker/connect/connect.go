// Package connect is the one place that turns a broker context's settings
// (URLs, TLS files, credentials and their sources, timeouts) into
// connections: the amqp091 Config of each AMQP node and the management
// API's HTTP transport and authorization. Nothing else in dlqt parses a
// broker URL or reads a credential.
//
// Secrets (passwords, tokens) never leave this package in an error: a URL
// that does not parse is described, never echoed (Go's url.Error repeats
// the whole URL, password included, so it is never wrapped).
package connect

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultTimeout bounds a connection attempt (TCP, TLS and the AMQP or HTTP
// handshake) when nothing else is set.
const DefaultTimeout = 10 * time.Second

// TLS is the tls: section of a config (and mgmt_tls:, which overrides it
// field by field for the management API).
type TLS struct {
	CAFile     string `yaml:"ca_file"`
	CertFile   string `yaml:"cert_file"`
	KeyFile    string `yaml:"key_file"`
	ServerName string `yaml:"server_name"`
	Insecure   bool   `yaml:"insecure"`
}

// Over lays t's set fields over base.
func (t TLS) Over(base TLS) TLS {
	if t.CAFile != "" {
		base.CAFile = t.CAFile
	}
	if t.CertFile != "" || t.KeyFile != "" {
		base.CertFile, base.KeyFile = t.CertFile, t.KeyFile
	}
	if t.ServerName != "" {
		base.ServerName = t.ServerName
	}
	base.Insecure = base.Insecure || t.Insecure
	return base
}

// Auth says who dlqt is and where the secret comes from. At most one
// password source and at most one token source may be set.
type Auth struct {
	// Mechanism is "" or "plain" (user and password), or "external" (SASL
	// EXTERNAL: the client certificate is the identity on AMQP).
	Mechanism string `yaml:"auth"`
	User      string `yaml:"user"`
	// Password is given directly (DLQT_PASSWORD, or a prompt's answer).
	Password        string `yaml:"-"`
	PasswordFile    string `yaml:"password_file"`
	PasswordCommand string `yaml:"password_command"`
	// TokenFile and TokenCommand give an OAuth2 access token (a JWT), sent
	// as Authorization: Bearer to the management API and as the AMQP
	// password (rabbitmq_auth_backend_oauth2 takes it with any user name).
	TokenFile    string `yaml:"token_file"`
	TokenCommand string `yaml:"token_command"`
}

// Over lays a's set fields over base.
func (a Auth) Over(base Auth) Auth {
	for _, f := range []struct{ from, to *string }{
		{&a.Mechanism, &base.Mechanism}, {&a.User, &base.User}, {&a.Password, &base.Password},
		{&a.PasswordFile, &base.PasswordFile}, {&a.PasswordCommand, &base.PasswordCommand},
		{&a.TokenFile, &base.TokenFile}, {&a.TokenCommand, &base.TokenCommand},
	} {
		if *f.from != "" {
			*f.to = *f.from
		}
	}
	return base
}

// HasToken says whether an OAuth2 token source is set.
func (a Auth) HasToken() bool { return a.TokenFile != "" || a.TokenCommand != "" }

// hasPasswordSource says whether a password can be had without a prompt.
func (a Auth) hasPasswordSource() bool {
	return a.Password != "" || a.PasswordFile != "" || a.PasswordCommand != ""
}

// Settings are everything a broker context says about reaching it.
type Settings struct {
	AMQPURL string // one URL or a comma-separated list of nodes
	MgmtURL string // likewise
	// Vhost is the vhost to work in; "" takes the AMQP URL's path, else "/".
	// A URL path naming another vhost is refused.
	Vhost   string
	TLS     TLS
	MgmtTLS TLS // laid over TLS for the management API
	Auth    Auth
	// Timeout bounds each connection attempt to one node; 0 is DefaultTimeout.
	Timeout time.Duration
	// Prompt asks for the password of a user who has none (a no-echo
	// prompt on a terminal); nil means there is no one to ask.
	Prompt func(user string) (string, error)
}

// Node is one AMQP listener of the broker.
type Node struct {
	Addr       string // host:port, for messages
	Scheme     string // amqp or amqps
	host, port string
	tls        TLS           // settings' TLS with the URL's cacertfile/certfile/keyfile/server_name_indication
	user, pass string        // from the URL; pass is never printed
	hasUser    bool          // the URL names a user
	external   bool          // ?auth_mechanism=external
	heartbeat  time.Duration // ?heartbeat=, 0 = amqp091's default
	timeout    time.Duration // ?connection_timeout=, else the settings'
}

// MgmtNode is one management API endpoint: scheme, host and path prefix,
// without user info or trailing slash.
type MgmtNode struct {
	URL *url.URL
}

// Conn is a context's settings resolved into what connections need. It is
// safe for concurrent use; a token is re-read whenever Refresh is called.
type Conn struct {
	s       Settings
	Vhost   string
	nodes   []Node
	mgmt    []*url.URL
	timeout time.Duration

	amqpUser, amqpPass string // the AMQP credentials when not per node or token
	mgmtUser, mgmtPass string
	mgmtFromURL        bool // the management URL names its own user
	external           bool
	password           *string // the password source's answer, read once

	mu    sync.Mutex
	token string // current OAuth2 token, re-read by Refresh

	// certAsked (per AMQP node) and mgmtCertAsked record a server that
	// asked for a client certificate dlqt did not have (noteCertRequest).
	certAsked     []atomic.Bool
	mgmtCertAsked atomic.Bool
}

// URLError is a broker URL that does not parse or is not usable. Its text
// never repeats the URL's password.
type URLError struct {
	What string // "AMQP URL", "management URL"
	URL  string // the URL with any password hidden; may be ""
	Why  string
}

func (e *URLError) Error() string {
	if e.URL == "" {
		return "bad " + e.What + ": " + e.Why
	}
	return fmt.Sprintf("bad %s %s: %s", e.What, e.URL, e.Why)
}

// New resolves settings into a Conn: every URL parsed, every file and
// command read, every conflict refused. Its errors carry no secret.
func New(s Settings) (*Conn, error) {
	c := &Conn{s: s, timeout: s.Timeout}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if err := checkTLS(s.TLS, "tls"); err != nil {
		return nil, err
	}
	if err := checkTLS(s.MgmtTLS, "mgmt_tls"); err != nil {
		return nil, err
	}
	switch strings.ToLower(s.Auth.Mechanism) {
	case "", "plain":
	case "external":
		c.external = true
	default:
		return nil, fmt.Errorf("auth: %q is not a mechanism dlqt knows (want plain or external)", s.Auth.Mechanism)
	}
	if n := countSet(s.Auth.Password, s.Auth.PasswordFile, s.Auth.PasswordCommand); n > 1 {
		return nil, errors.New("more than one password source is set (DLQT_PASSWORD, password_file or --password-file, password_command): keep one")
	}
	if s.Auth.TokenFile != "" && s.Auth.TokenCommand != "" {
		return nil, errors.New("both token_file and token_command are set: keep one")
	}
	if s.Auth.HasToken() && s.Auth.hasPasswordSource() {
		return nil, errors.New("both an OAuth2 token source (token_file, token_command) and a password source are set: keep one")
	}
	if err := c.parseAMQP(); err != nil {
		return nil, err
	}
	if err := c.parseMgmt(); err != nil {
		return nil, err
	}
	c.certAsked = make([]atomic.Bool, len(c.nodes))
	// TLS files are read now, so a wrong path is said before any dial.
	for _, n := range c.nodes {
		if n.Scheme == "amqps" {
			if _, err := n.tls.tlsConfig("tls"); err != nil {
				return nil, err
			}
		}
	}
	for _, u := range c.mgmt {
		if u.Scheme == "https" {
			if _, err := c.MgmtTLS().tlsConfig(c.mgmtSection()); err != nil {
				return nil, err
			}
			break
		}
	}
	if err := c.credentials(); err != nil {
		return nil, err
	}
	return c, nil
}

func countSet(vs ...string) int {
	n := 0
	for _, v := range vs {
		if v != "" {
			n++
		}
	}
	return n
}

// checkTLS refuses a key without a certificate and the reverse.
func checkTLS(t TLS, section string) error {
	switch {
	case t.CertFile != "" && t.KeyFile == "":
		return fmt.Errorf("%s.cert_file is set but %s.key_file is not (--tls-cert-file needs --tls-key-file): a client certificate needs its key", section, section)
	case t.KeyFile != "" && t.CertFile == "":
		return fmt.Errorf("%s.key_file is set but %s.cert_file is not (--tls-key-file needs --tls-cert-file): a key needs its client certificate", section, section)
	}
	return nil
}

// SplitNodes splits a comma-separated list of URLs. A piece without a
// scheme cannot start a URL: it is a comma inside the previous one (a
// password), so it is joined back and a single URL reads as it always did.
func SplitNodes(raw string) []string {
	var nodes []string
	for piece := range strings.SplitSeq(raw, ",") {
		if strings.TrimSpace(piece) == "" {
			continue
		}
		if len(nodes) > 0 && !strings.Contains(piece, "://") {
			nodes[len(nodes)-1] += "," + piece
			continue
		}
		nodes = append(nodes, piece)
	}
	for i, n := range nodes {
		nodes[i] = strings.TrimSpace(n)
	}
	return nodes
}

// Redact hides the password of a URL, even one that does not parse.
func Redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		if u.User == nil {
			return raw
		}
		return u.Redacted()
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		if strings.ContainsAny(raw, "@:") {
			return "(a URL that does not parse)"
		}
		return raw
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if hasPass {
		user += ":xxxxx"
	}
	return scheme + "://" + user + "@" + rest[at+1:]
}

// shown is a URL as an error shows it: password hidden, query left out
// (it may name files, or worse).
func shown(raw string) string {
	s, _, _ := strings.Cut(Redact(raw), "?")
	return s
}

// parseURL parses one node URL; its error describes the problem without
// the URL's text beyond the redacted form.
func parseURL(raw, what string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		why := "it does not parse"
		if errors.As(err, &ue) {
			msg := ue.Err.Error()
			switch {
			case strings.Contains(msg, "invalid URL escape"):
				why = "it holds a % that starts no escape; the password must be percent-encoded: @ → %40, / → %2F, % → %25, : → %3A"
			case strings.Contains(msg, "invalid port"):
				why = "the port is not a number; if the password holds @, / or :, percent-encode it (@ → %40, / → %2F, % → %25, : → %3A)"
			case strings.Contains(msg, "invalid character"), strings.Contains(msg, "invalid userinfo"):
				why = "it holds a character a URL may not; the password must be percent-encoded: @ → %40, / → %2F, % → %25"
			case strings.Contains(msg, "missing protocol scheme"):
				why = "it has no scheme (want amqp://, amqps://, http:// or https://)"
			default:
				why = "it does not parse; the password must be percent-encoded: @ → %40, / → %2F, % → %25"
			}
		}
		return nil, &URLError{What: what, URL: shown(raw), Why: why}
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, &URLError{What: what, URL: shown(raw), Why: "the port must be a number from 1 to 65535"}
		}
	}
	if strings.Contains(u.Host, "@") || (u.User != nil && u.Host == "") {
		return nil, &URLError{What: what, URL: shown(raw), Why: "it names no host; if the password holds @ or /, percent-encode it (@ → %40, / → %2F)"}
	}
	return u, nil
}

// urlVhost is the vhost an AMQP URL's path names, "" for none ("" or "/").
func urlVhost(u *url.URL) string {
	p := u.Path
	if p == "" || p == "/" {
		return ""
	}
	return strings.TrimPrefix(p, "/")
}

func (c *Conn) parseAMQP() error {
	raws := SplitNodes(c.s.AMQPURL)
	if len(raws) == 0 {
		return &URLError{What: "AMQP URL", Why: "no URL given"}
	}
	var firstUser *url.Userinfo
	urlVh := ""
	for i, raw := range raws {
		u, err := parseURL(raw, "AMQP URL")
		if err != nil {
			return err
		}
		if u.Scheme != "amqp" && u.Scheme != "amqps" {
			return &URLError{What: "AMQP URL", URL: shown(raw), Why: "want amqp:// or amqps://"}
		}
		if u.Hostname() == "" {
			return &URLError{What: "AMQP URL", URL: shown(raw), Why: "it names no host"}
		}
		if v := urlVhost(u); v != "" {
			if urlVh != "" && v != urlVh {
				return fmt.Errorf("the AMQP URLs name two vhosts, %q and %q: name one (or use --vhost)", urlVh, v)
			}
			urlVh = v
		}
		if i == 0 {
			firstUser = u.User
		}
		ui := u.User
		if ui == nil {
			ui = firstUser // a node without user info takes the first one's
		}
		n, err := c.node(u, raw, ui)
		if err != nil {
			return err
		}
		c.nodes = append(c.nodes, n)
	}
	switch {
	case c.s.Vhost == "" && urlVh != "":
		c.Vhost = urlVh
	case c.s.Vhost == "":
		c.Vhost = "/"
	case urlVh != "" && urlVh != c.s.Vhost:
		return fmt.Errorf("the AMQP URL's path names vhost %q but the vhost setting (--vhost, DLQT_VHOST or vhost) is %q: drop one of them", urlVh, c.s.Vhost)
	default:
		c.Vhost = c.s.Vhost
	}
	return nil
}

func (c *Conn) node(u *url.URL, raw string, ui *url.Userinfo) (Node, error) {
	n := Node{Scheme: u.Scheme, host: u.Hostname(), port: u.Port(), tls: c.s.TLS, timeout: c.timeout}
	if n.port == "" {
		n.port = "5672"
		if u.Scheme == "amqps" {
			n.port = "5671"
		}
	}
	n.Addr = net.JoinHostPort(n.host, n.port)
	if ui != nil {
		n.hasUser = true
		n.user = ui.Username()
		n.pass, _ = ui.Password()
	}
	q := u.Query()
	bad := func(why string) error { return &URLError{What: "AMQP URL", URL: shown(raw), Why: why} }
	// The URL's TLS files fill what the settings leave unset.
	if v := q.Get("cacertfile"); v != "" && n.tls.CAFile == "" {
		n.tls.CAFile = v
	}
	cert, key := q.Get("certfile"), q.Get("keyfile")
	if cert != "" || key != "" {
		if cert == "" || key == "" {
			return n, bad("?certfile= and ?keyfile= go together: a client certificate needs its key")
		}
		if n.tls.CertFile == "" {
			n.tls.CertFile, n.tls.KeyFile = cert, key
		}
	}
	if v := q.Get("server_name_indication"); v != "" && n.tls.ServerName == "" {
		n.tls.ServerName = v
	}
	for _, m := range q["auth_mechanism"] {
		switch strings.ToLower(m) {
		case "external":
			n.external = true
		case "plain", "amqplain":
		default:
			return n, bad(fmt.Sprintf("auth_mechanism=%s: dlqt knows plain and external", m))
		}
	}
	if q.Has("heartbeat") {
		s, err := strconv.ParseUint(q.Get("heartbeat"), 10, 16)
		if err != nil {
			return n, bad("heartbeat= must be whole seconds (0 to 65535)")
		}
		n.heartbeat = time.Duration(s) * time.Second
	}
	if q.Has("connection_timeout") {
		ms, err := strconv.Atoi(q.Get("connection_timeout"))
		if err != nil || ms <= 0 {
			return n, bad("connection_timeout= must be a positive whole number of milliseconds (or use --connect-timeout)")
		}
		n.timeout = time.Duration(ms) * time.Millisecond
	}
	if u.Scheme == "amqp" && (n.tls.CAFile != "" || n.tls.CertFile != "") && (q.Has("cacertfile") || q.Has("certfile")) {
		return n, bad("TLS files are given for an amqp:// URL: use amqps:// for TLS")
	}
	return n, nil
}

func (c *Conn) parseMgmt() error {
	raws := SplitNodes(c.s.MgmtURL)
	if len(raws) == 0 {
		return &URLError{What: "management URL", Why: "no URL given"}
	}
	var firstUser *url.Userinfo
	for i, raw := range raws {
		u, err := parseURL(raw, "management URL")
		if err != nil {
			return err
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return &URLError{What: "management URL", URL: shown(raw), Why: "want http://host:15672 or https://"}
		}
		if u.Host == "" {
			return &URLError{What: "management URL", URL: shown(raw), Why: "want http://host:15672"}
		}
		if i == 0 {
			firstUser = u.User
		}
		if u.User != nil && firstUser == nil {
			firstUser = u.User
		}
		u.User = nil
		u.RawQuery, u.Fragment = "", ""
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = strings.TrimSuffix(u.RawPath, "/")
		c.mgmt = append(c.mgmt, u)
	}
	if firstUser != nil {
		c.mgmtUser = firstUser.Username()
		c.mgmtPass, _ = firstUser.Password()
		c.mgmtFromURL = true
	}
	return nil
}
