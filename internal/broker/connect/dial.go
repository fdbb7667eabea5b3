package connect

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// tlsConfig builds the client side of a TLS connection from t. section
// names the settings in errors ("tls", "mgmt_tls").
func (t TLS) tlsConfig(section string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName, InsecureSkipVerify: t.Insecure}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%s.ca_file: %v", section, pathErr(err, t.CAFile))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s.ca_file %s holds no PEM certificate (want the CA certificate that signed the broker's, in PEM)", section, t.CAFile)
		}
		cfg.RootCAs = pool
	}
	if err := checkTLS(t, section); err != nil {
		return nil, err
	}
	if t.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s.cert_file/key_file: %v", section, pathErr(err, pe.Path))
			}
			// crypto/tls's messages name no key material
			return nil, fmt.Errorf("%s.cert_file %s with key_file %s: %v", section, t.CertFile, t.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// Nodes are the AMQP nodes, in the order given.
func (c *Conn) Nodes() []Node { return c.nodes }

// Timeout is the bound on one connection attempt to one node.
func (c *Conn) Timeout() time.Duration { return c.timeout }

// AMQPUser is the AMQP user for messages ("EXTERNAL" names the client
// certificate's).
func (c *Conn) AMQPUser() string {
	if len(c.nodes) > 0 && c.nodes[0].external {
		return "(client certificate)"
	}
	return c.amqpUser
}

// AMQP returns what amqp.DialConfig needs to reach node i: a URL without
// credentials and a Config carrying TLS, SASL, heartbeat, dial timeout,
// vhost and the connection's name. A token is re-read first, so a
// reconnect carries a fresh one.
func (c *Conn) AMQP(i int, name string) (string, amqp.Config, error) {
	n := c.nodes[i]
	if c.s.Auth.HasToken() {
		if err := c.Refresh(); err != nil {
			return "", amqp.Config{}, err
		}
	}
	cfg := amqp.Config{
		Vhost:      c.Vhost,
		Heartbeat:  n.heartbeat,
		Dial:       amqp.DefaultDial(n.timeout),
		Properties: amqp.Table{"connection_name": name},
	}
	switch {
	case n.external:
		cfg.SASL = []amqp.Authentication{&amqp.ExternalAuth{}}
	case c.s.Auth.HasToken():
		cfg.SASL = []amqp.Authentication{&amqp.PlainAuth{Username: c.amqpUser, Password: c.Token()}}
	case n.hasUser && n.pass != "":
		cfg.SASL = []amqp.Authentication{&amqp.PlainAuth{Username: n.user, Password: n.pass}}
	default:
		cfg.SASL = []amqp.Authentication{&amqp.PlainAuth{Username: c.amqpUser, Password: c.amqpPass}}
	}
	if n.Scheme == "amqps" {
		tc, err := n.tls.tlsConfig("tls")
		if err != nil {
			return "", amqp.Config{}, err
		}
		c.noteCertRequest(tc, &c.certAsked[i])
		if tc.ServerName == "" {
			tc.ServerName = n.host
		}
		cfg.TLSClientConfig = tc
	}
	u := url.URL{Scheme: n.Scheme, Host: n.Addr, Path: "/"}
	return u.String(), cfg, nil
}

// NodeUser is the user node i logs in as, for messages.
func (c *Conn) NodeUser(i int) string {
	n := c.nodes[i]
	switch {
	case n.external:
		return "(client certificate)"
	case !c.s.Auth.HasToken() && n.hasUser && n.pass != "":
		return n.user
	}
	return c.amqpUser
}

// MgmtNodes are the management endpoints: scheme, host and path prefix,
// without user info or trailing slash. The caller may not change them.
func (c *Conn) MgmtNodes() []*url.URL { return c.mgmt }

// MgmtUser is the management API's user, for messages.
func (c *Conn) MgmtUser() string {
	if c.s.Auth.HasToken() {
		return "(OAuth2 token)"
	}
	return c.mgmtUser
}

// MgmtTLS is the management API's TLS settings: mgmt_tls over tls.
func (c *Conn) MgmtTLS() TLS { return c.s.MgmtTLS.Over(c.s.TLS) }

// HTTPTransport is the management API's transport: TLS from MgmtTLS, a
// dial and handshake bounded by the timeout, and every request authorized
// (Basic, or Bearer with a token re-read and the request sent once more
// on a 401).
func (c *Conn) HTTPTransport() (http.RoundTripper, error) {
	tc, err := c.MgmtTLS().tlsConfig(c.mgmtSection())
	if err != nil {
		return nil, err
	}
	c.noteCertRequest(tc, &c.mgmtCertAsked)
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tc
	t.DialContext = (&net.Dialer{Timeout: c.timeout, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = c.timeout
	t.Proxy = http.ProxyFromEnvironment
	return &authTransport{c: c, next: t}, nil
}

// authTransport sets each request's Authorization, replacing whatever a
// client library put there.
type authTransport struct {
	c    *Conn
	next http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := t.authorize(req)
	res, err := t.next.RoundTrip(r)
	if err != nil || res.StatusCode != http.StatusUnauthorized || !t.c.s.Auth.HasToken() {
		return res, err
	}
	// The token may have been replaced since it was read: read it again
	// and try once more, when the request can be sent again.
	if req.Body != nil && req.GetBody == nil {
		return res, nil
	}
	if rerr := t.c.Refresh(); rerr != nil {
		io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
		res.Body.Close()
		return nil, rerr
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
	res.Body.Close()
	r = t.authorize(req)
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	return t.next.RoundTrip(r)
}

func (t *authTransport) authorize(req *http.Request) *http.Request {
	r := req.Clone(req.Context())
	if t.c.s.Auth.HasToken() {
		r.Header.Set("Authorization", "Bearer "+t.c.Token())
	} else {
		r.SetBasicAuth(t.c.mgmtUser, t.c.mgmtPass)
	}
	return r
}

// External says whether the node logs in with SASL EXTERNAL.
func (n Node) External() bool { return n.external }

// Timeout bounds a connection attempt to this node.
func (n Node) Timeout() time.Duration { return n.timeout }

// Auth is the authentication settings.
func (c *Conn) Auth() Auth { return c.s.Auth }

// mgmtSection names the settings the management API's TLS comes from.
func (c *Conn) mgmtSection() string {
	if c.s.MgmtTLS == (TLS{}) {
		return "tls"
	}
	return "mgmt_tls"
}

// noteCertRequest makes tc record in asked whether a server asked for a
// client certificate that dlqt has none to give. With TLS 1.3 the server's
// "certificate required" alert comes after the client's handshake ended,
// and often loses the race with the connection's reset: the error is then
// a bare "connection reset by peer", which this record explains.
func (c *Conn) noteCertRequest(tc *tls.Config, asked *atomic.Bool) {
	certs := tc.Certificates
	tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if len(certs) > 0 {
			return &certs[0], nil
		}
		asked.Store(true)
		return &tls.Certificate{}, nil
	}
}

// certHint is the hint for an error on a connection whose server asked for
// a client certificate dlqt did not have, when the error is the server
// hanging up (its alert lost to the reset).
func certHint(err error, asked bool) string {
	if !asked {
		return ""
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, amqp.ErrClosed) || strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "EOF") {
		return "the broker asked for a client certificate and dlqt has none: set tls.cert_file and tls.key_file (--tls-cert-file, --tls-key-file)"
	}
	return ""
}

// HintAMQP is Hint for a dial error of AMQP node i.
func (c *Conn) HintAMQP(i int, err error) string {
	if h := Hint(err, c.nodes[i].Scheme); h != "" {
		return h
	}
	return certHint(err, c.certAsked[i].Load())
}

// HintMgmt is Hint for an error of the management API node with scheme.
func (c *Conn) HintMgmt(err error, scheme string) string {
	if h := Hint(err, scheme); h != "" {
		return h
	}
	return certHint(err, c.mgmtCertAsked.Load())
}
