package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A cluster is given as a comma-separated list of node URLs. dlqt connects
// to the first node that answers and, when a connection is lost, to the
// next one that answers (docs/ARCHITECTURE.md, "Clusters" under the broker facts).

// splitNodes splits a comma-separated list of URLs. A piece without a
// scheme cannot start a URL: it is a comma inside the previous one (a
// password), so it is joined back and a single URL reads as it always did.
func splitNodes(raw string) []string {
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

// parseNodes parses a list of node URLs. A URL without user info inherits
// the first user info of the list, so only the first node needs it.
func parseNodes(raw, what string) ([]*url.URL, error) {
	var nodes []*url.URL
	var user *url.Userinfo
	for _, s := range splitNodes(raw) {
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("bad %s %q: %w (a list of nodes is comma-separated full URLs)", what, redactURL(s), err)
		}
		if user == nil {
			user = u.User
		}
		nodes = append(nodes, u)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("bad %s %q: no URL", what, raw)
	}
	for _, u := range nodes {
		if u.User == nil {
			u.User = user
		}
	}
	return nodes, nil
}

// nodeTry is one node that did not answer, and why.
type nodeTry struct {
	addr string
	err  error
	why  string
}

// noNodeError says that no node of a list answered, naming each one tried.
// It unwraps to every node's error, so errors.Is(err, syscall.ECONNREFUSED)
// still tells "nothing answers" from "answered and said no".
type noNodeError struct{ tries []nodeTry }

func (e *noNodeError) Error() string {
	parts := make([]string, len(e.tries))
	for i, t := range e.tries {
		parts[i] = t.addr + " (" + t.why + ")"
	}
	return "no node answered: " + strings.Join(parts, ", ")
}

func (e *noNodeError) Unwrap() []error {
	errs := make([]error, len(e.tries))
	for i, t := range e.tries {
		errs[i] = t.err
	}
	return errs
}

// amqpNodes are the AMQP URLs of a broker, each pointed at the vhost, and
// the one dlqt last reached.
type amqpNodes struct {
	urls  []string // hold passwords, never printed
	addrs []string // host:port, for messages
	mu    sync.Mutex
	cur   int
}

func newAMQPNodes(c Config) (*amqpNodes, error) {
	nodes, err := parseNodes(c.AMQPURL, "AMQP URL")
	if err != nil {
		return nil, err
	}
	n := &amqpNodes{}
	for _, u := range nodes {
		u.Path = "/" + c.Vhost
		u.RawPath = "/" + url.PathEscape(c.Vhost)
		n.urls = append(n.urls, u.String())
		n.addrs = append(n.addrs, hostPort(u))
	}
	return n, nil
}

// current is the address of the node dlqt reached last.
func (n *amqpNodes) current() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.addrs[n.cur]
}

// dial connects to the first node that answers, starting with the one
// reached last, or with the one after it when that one's connection was
// lost (next). A node that answers and refuses (credentials, vhost access)
// ends the search: every node of a cluster would say the same.
func (n *amqpNodes) dial(ctx context.Context, c Config, name string, next bool) (*amqp.Connection, error) {
	n.mu.Lock()
	start := n.cur
	n.mu.Unlock()
	if next {
		start++
	}
	user := amqpUser(n.urls[0])
	var tries []nodeTry
	for k := range n.urls {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		i := (start + k) % len(n.urls)
		conn, err := amqp.DialConfig(n.urls[i], amqp.Config{
			Dial:       amqp.DefaultDial(c.timeout()),
			Properties: amqp.Table{"connection_name": name},
		})
		if err == nil {
			n.mu.Lock()
			n.cur = i
			n.mu.Unlock()
			return conn, nil
		}
		explained := explainAMQP(err, user, n.addrs[i], c)
		if len(n.urls) == 1 || answeredNo(err) {
			return nil, explained
		}
		why := strings.TrimPrefix(explained.Error(), "AMQP at "+n.addrs[i]+": ")
		if errors.Is(err, syscall.ECONNREFUSED) {
			why = "connection refused"
		}
		tries = append(tries, nodeTry{addr: n.addrs[i], err: err, why: why})
	}
	return nil, fmt.Errorf("AMQP: %w", &noNodeError{tries})
}

// answeredNo is an AMQP refusal from a node that is up.
func answeredNo(err error) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && (ae.Code == amqp.AccessRefused || ae.Code == amqp.NotAllowed)
}

// explainAMQP turns an AMQP dial error into one line without the password.
func explainAMQP(err error, user, addr string, c Config) error {
	var ae *amqp.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return because(err, "AMQP at %s: connection refused — is RabbitMQ running and listening there?", addr)
	case errors.As(err, &ae) && ae.Code == amqp.AccessRefused:
		return fmt.Errorf("AMQP at %s: bad credentials for user %s", addr, user)
	case errors.As(err, &ae) && ae.Code == amqp.NotAllowed:
		return fmt.Errorf("AMQP at %s: user %s may not open vhost %q: %s", addr, user, c.Vhost, ae.Reason)
	case errors.As(err, &ae):
		return fmt.Errorf("AMQP at %s: %s", addr, ae.Reason)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("AMQP at %s: no answer within %s", addr, c.timeout())
	}
	return fmt.Errorf("AMQP at %s: %v", addr, err)
}
