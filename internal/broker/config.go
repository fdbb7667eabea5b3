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
	AMQPURL string // amqp://user:pass@host:port/, or a comma-separated list of nodes
	MgmtURL string // http://host:15672 or a list; credentials default to the AMQP URL's
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

// credentials returns the management user and password: the first user
// info of the management URLs, else of the AMQP URLs, else guest/guest.
func (c Config) credentials() (user, pass string, err error) {
	for _, raw := range []string{c.MgmtURL, c.AMQPURL} {
		for _, s := range splitNodes(raw) {
			u, err := url.Parse(s)
			if err != nil {
				return "", "", fmt.Errorf("bad URL %q: %w", redactURL(s), err)
			}
			if u.User != nil {
				p, _ := u.User.Password()
				return u.User.Username(), p, nil
			}
		}
	}
	return "guest", "guest", nil
}

// amqpURL is the first node's AMQP URL pointed at c.Vhost.
func (c Config) amqpURL() (string, error) {
	nodes, err := newAMQPNodes(c)
	if err != nil {
		return "", err
	}
	return nodes.urls[0], nil
}

// VhostURL is the AMQP URL pointed at c.Vhost, for tools and tests that
// dial the broker themselves.
func (c Config) VhostURL() (string, error) { return c.amqpURL() }

// management returns a rabbit-hole client for the management API of the
// first node.
func (c Config) management() (*rabbithole.Client, error) {
	user, pass, err := c.credentials()
	if err != nil {
		return nil, err
	}
	nodes, err := parseNodes(c.MgmtURL, "management URL")
	if err != nil {
		return nil, err
	}
	u := nodes[0]
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
