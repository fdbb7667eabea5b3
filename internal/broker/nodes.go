package broker

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"syscall"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/connect"
)

// A cluster is given as a comma-separated list of node URLs. dlqt connects
// to the first node that answers and, when a connection is lost, to the
// next one that answers (docs/ARCHITECTURE.md, "Clusters" under the broker facts).

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

// amqpNodes are the AMQP listeners of a broker and the one dlqt last
// reached. connect holds their URLs and credentials.
type amqpNodes struct {
	cc    *connect.Conn
	addrs []string // host:port, for messages
	mu    sync.Mutex
	cur   int
}

func newAMQPNodes(cc *connect.Conn) *amqpNodes {
	n := &amqpNodes{cc: cc}
	for _, node := range cc.Nodes() {
		n.addrs = append(n.addrs, node.Addr)
	}
	return n
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
// ends the search: every node of a cluster would say the same. An OAuth2
// token is re-read for every attempt.
func (n *amqpNodes) dial(ctx context.Context, name string, next bool) (*amqp.Connection, error) {
	n.mu.Lock()
	start := n.cur
	n.mu.Unlock()
	if next {
		start++
	}
	nodes := n.cc.Nodes()
	var tries []nodeTry
	for k := range nodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		i := (start + k) % len(nodes)
		u, cfg, err := n.cc.AMQP(i, name)
		if err != nil {
			return nil, err // a token or TLS file that cannot be read: every node would fail
		}
		conn, err := amqp.DialConfig(u, cfg)
		if err == nil {
			n.mu.Lock()
			n.cur = i
			n.mu.Unlock()
			return conn, nil
		}
		explained := explainAMQP(err, n.cc, i)
		if len(nodes) == 1 || answeredNo(err) {
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

// explainAMQP turns an AMQP dial error to node i into one line without
// the password, with what to change when that is known.
func explainAMQP(err error, cc *connect.Conn, i int) error {
	node := cc.Nodes()[i]
	addr, user, vhost := node.Addr, cc.NodeUser(i), cc.Vhost
	var ae *amqp.Error
	hint := cc.HintAMQP(i, err)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return because(err, "AMQP at %s: connection refused — is RabbitMQ running and listening there?", addr)
	case connect.IsTimeout(err):
		return because(err, "AMQP at %s: no answer within %s", addr, node.Timeout())
	case errors.As(err, &ae) && ae.Code == amqp.AccessRefused && cc.Auth().HasToken():
		return because(err, "AMQP at %s: the broker refused the OAuth2 token (is rabbitmq_auth_backend_oauth2 on, and the token's audience and scopes right?)", addr)
	case errors.As(err, &ae) && ae.Code == amqp.AccessRefused && node.External():
		return because(err, "AMQP at %s: the broker refused the client certificate for EXTERNAL (is rabbitmq_auth_mechanism_ssl on, and a user named as the certificate's subject?): %s", addr, ae.Reason)
	case errors.As(err, &ae) && ae.Code == amqp.AccessRefused:
		return because(err, "AMQP at %s: bad credentials for user %s", addr, user)
	case errors.As(err, &ae) && ae.Code == amqp.NotAllowed:
		return because(err, "AMQP at %s: user %s may not open vhost %q: %s", addr, user, vhost, ae.Reason)
	case hint != "":
		return because(err, "AMQP at %s: %s — %s", addr, safeText(err), hint)
	case errors.As(err, &ae):
		return because(err, "AMQP at %s: %s", addr, ae.Reason)
	}
	return because(err, "AMQP at %s: %s", addr, safeText(err))
}

// safeText is an error's text without a URL a url.Error would repeat.
func safeText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ae *amqp.Error
	if errors.As(err, &ae) {
		return ae.Reason
	}
	return err.Error()
}
