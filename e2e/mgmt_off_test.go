package e2e

import (
	"net"
	"strings"
	"testing"
)

// With the management plugin off (its port closed) while AMQP answers,
// dlqt says which of the two did not answer and how to turn the plugin on,
// in the TUI's demo notice and in a headless error.
func TestManagementOffIsNamedNotNoBroker(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	env := append(isolatedEnv(t), "DLQT_AMQP_URL=amqp://guest:guest@127.0.0.1:5672/", "DLQT_MGMT_URL=http://"+closed)

	r := runDlqt(t, env, "queues")
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	assertOneLine(t, r.stderr, "AMQP answered at amqp://guest:xxxxx@127.0.0.1:5672/", "management API at http://"+closed+" did not",
		"rabbitmq-plugins enable rabbitmq_management")

	s := startTerm(t, 250, 30, env, "--demo-fallback")
	s.waitFor("DEMO data: AMQP answered at", "rabbitmq-plugins enable rabbitmq_management", "billing.parking")
	s.keys("q")
	waitExit(t, s)
}

// TestBrokerDownNamesBothPorts: with nothing on either port (the broker is
// down, or both ports are wrong) the error says neither answered and names
// both addresses, not only the management plugin.
func TestBrokerDownNamesBothPorts(t *testing.T) {
	var closed [2]string
	for i := range closed {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed[i] = l.Addr().String()
		l.Close()
	}
	env := append(isolatedEnv(t), "DLQT_AMQP_URL=amqp://guest:guest@"+closed[0]+"/", "DLQT_MGMT_URL=http://"+closed[1])
	r := runDlqt(t, env, "queues")
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	assertOneLine(t, r.stderr, "neither AMQP nor the management API answers", closed[0], "http://"+closed[1], "is RabbitMQ running there")
	if strings.Contains(r.stderr, "rabbitmq_management enabled") {
		t.Errorf("blames the management plugin alone: %s", r.stderr)
	}
}
