package cli

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/dlqt/dlqt/internal/broker/connect"
)

// enableManagement is how a broker gets the management API dlqt reads the
// topology from.
const enableManagement = "rabbitmq-plugins enable rabbitmq_management"

// endpointAnswers reports whether anything accepts a TCP connection at the
// host and port of rawURL, or of any node of a list (defaultPort when the
// URL names none).
func endpointAnswers(rawURL, defaultPort string) bool {
	for _, n := range connect.SplitNodes(rawURL) {
		if nodeAnswers(n, defaultPort) {
			return true
		}
	}
	return false
}

func nodeAnswers(rawURL, defaultPort string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return false
	}
	port := u.Port()
	if port == "" {
		port = defaultPort
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort(u.Hostname(), port), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// unanswered says which of the broker's two endpoints did not answer, for
// an error that says nothing answered: dlqt needs both, and "no broker
// answered" misleads when AMQP is up and only the management plugin is off.
// It is "" when both answer or neither does.
func unanswered(amqpURL, mgmtURL string) string {
	amqpDefault, mgmtDefault := "5672", "80"
	if strings.HasPrefix(amqpURL, "amqps://") {
		amqpDefault = "5671"
	}
	if strings.HasPrefix(mgmtURL, "https://") {
		mgmtDefault = "443"
	}
	amqpUp, mgmtUp := endpointAnswers(amqpURL, amqpDefault), endpointAnswers(mgmtURL, mgmtDefault)
	switch {
	case amqpUp && !mgmtUp:
		return fmt.Sprintf("AMQP answered at %s but the management API at %s did not: is its plugin on? (%s)",
			redactedURL(amqpURL), redactedURL(mgmtURL), enableManagement)
	case mgmtUp && !amqpUp:
		return fmt.Sprintf("the management API answered at %s but AMQP at %s did not", redactedURL(mgmtURL), redactedURL(amqpURL))
	}
	return ""
}
