// Package broker is all of dlqt's RabbitMQ I/O: the management API (through
// rabbit-hole, plus raw JSON for the fields it lacks), AMQP browsing with
// amqp091-go, and offline snapshot files. It returns triage values.
package broker

import (
	"fmt"
	"net/url"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// Config says where the broker is. The AMQP URL's own vhost path is ignored:
// Vhost is the one vhost dlqt works in.
type Config struct {
	AMQPURL string // amqp://user:pass@host:port/
	MgmtURL string // http://host:15672; credentials default to the AMQP URL's
	Vhost   string
	Timeout time.Duration // per management request and AMQP dial; 0 = 10s
}

// Defaults for a local broker.
const (
	DefaultAMQPURL = "amqp://guest:guest@127.0.0.1:5672/"
	DefaultMgmtURL = "http://127.0.0.1:15672"
)

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return 10 * time.Second
}

// credentials returns the management user and password: the management
// URL's userinfo when it has one, else the AMQP URL's, else guest/guest.
func (c Config) credentials() (user, pass string, err error) {
	for _, raw := range []string{c.MgmtURL, c.AMQPURL} {
		u, err := url.Parse(raw)
		if err != nil {
			return "", "", fmt.Errorf("bad URL %q: %w", redactURL(raw), err)
		}
		if u.User != nil {
			p, _ := u.User.Password()
			return u.User.Username(), p, nil
		}
	}
	return "guest", "guest", nil
}

// amqpURL is the AMQP URL pointed at c.Vhost.
func (c Config) amqpURL() (string, error) {
	u, err := url.Parse(c.AMQPURL)
	if err != nil {
		return "", fmt.Errorf("bad AMQP URL %q: %w", redactURL(c.AMQPURL), err)
	}
	u.Path = "/" + c.Vhost
	u.RawPath = "/" + url.PathEscape(c.Vhost)
	return u.String(), nil
}

// VhostURL is the AMQP URL pointed at c.Vhost, for tools and tests that
// dial the broker themselves.
func (c Config) VhostURL() (string, error) { return c.amqpURL() }

// management returns a rabbit-hole client for the management API.
func (c Config) management() (*rabbithole.Client, error) {
	user, pass, err := c.credentials()
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(c.MgmtURL)
	if err != nil {
		return nil, fmt.Errorf("bad management URL %q: %w", redactURL(c.MgmtURL), err)
	}
	u.User = nil
	rh, err := rabbithole.NewClient(u.String(), user, pass)
	if err != nil {
		return nil, err
	}
	rh.SetTimeout(c.timeout())
	return rh, nil
}

// redactURL hides the password of a URL for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
