// Package broker is all of dlqt's RabbitMQ I/O: the management API (through
// rabbit-hole, plus raw JSON for the fields it lacks), AMQP browsing with
// amqp091-go, and offline snapshot files. It returns triage values.
package broker

import (
	"fmt"
	"net/url"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/connect"
)

// Config says where the broker is and how to reach it. connect turns it
// into connections (internal/broker/connect): nothing in this package
// parses a URL or reads a credential itself.
type Config struct {
	AMQPURL string // amqp://user:pass@host:port/, or a comma-separated list of nodes
	MgmtURL string // http://host:15672 or a list; credentials default to the AMQP URL's
	// Vhost is the one vhost dlqt works in; "" takes the AMQP URL's path,
	// else "/". A URL path naming another vhost is refused.
	Vhost   string
	Timeout time.Duration // per connection attempt to one node, AMQP and HTTP; 0 = 10s

	TLS     connect.TLS  // both connections
	MgmtTLS connect.TLS  // laid over TLS for the management API
	Auth    connect.Auth // user, password and token sources, SASL mechanism
	// Prompt asks for a password when a user has none (nil: nobody to ask).
	Prompt func(user string) (string, error)
}

// Defaults for a local broker.
const (
	DefaultAMQPURL = "amqp://guest:guest@127.0.0.1:5672/"
	DefaultMgmtURL = "http://127.0.0.1:15672"
)

// Connect resolves c into connections' settings: every URL parsed, every
// credential read, every conflict refused; the error carries no secret.
func (c Config) Connect() (*connect.Conn, error) {
	if c.AMQPURL == "" {
		c.AMQPURL = DefaultAMQPURL
	}
	if c.MgmtURL == "" {
		c.MgmtURL = DefaultMgmtURL
	}
	return connect.New(connect.Settings{
		AMQPURL: c.AMQPURL, MgmtURL: c.MgmtURL, Vhost: c.Vhost,
		TLS: c.TLS, MgmtTLS: c.MgmtTLS, Auth: c.Auth, Timeout: c.Timeout, Prompt: c.Prompt,
	})
}

// amqpURL is the first node's AMQP URL pointed at the vhost, with its
// credentials (a secret: for tools that dial themselves, never printed).
func (c Config) amqpURL() (string, error) {
	cc, err := c.Connect()
	if err != nil {
		return "", err
	}
	raw, cfg, err := cc.AMQP(0, "")
	if err != nil {
		return "", err
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if p, ok := cfg.SASL[0].(*amqp.PlainAuth); ok {
		u.User = url.UserPassword(p.Username, p.Password)
	}
	u.Path = "/" + cc.Vhost
	u.RawPath = "/" + url.PathEscape(cc.Vhost)
	return u.String(), nil
}

// VhostURL is the AMQP URL pointed at c.Vhost, for tools and tests that
// dial the broker themselves. It holds the password: never print it.
func (c Config) VhostURL() (string, error) { return c.amqpURL() }

// management returns a rabbit-hole client for the management API, over the
// node list with c's TLS and credentials.
func (c Config) management() (*rabbithole.Client, error) {
	cc, err := c.Connect()
	if err != nil {
		return nil, err
	}
	m, err := newManagement(cc)
	if err != nil {
		return nil, err
	}
	rh, err := rabbithole.NewTLSClient(m.endpoint, m.user, "", m.http.Transport)
	if err != nil {
		return nil, fmt.Errorf("management API at %s: %w", m.endpoint, err)
	}
	rh.SetTimeout(m.http.Timeout)
	return rh, nil
}
