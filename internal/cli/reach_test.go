package cli

import (
	"net"
	"strings"
	"testing"
)

func TestUnansweredNamesTheEndpointThatDidNotAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	up, down := l.Addr().String(), closedPort(t)

	got := unanswered("amqp://guest:secret@"+up+"/", "http://"+down)
	for _, want := range []string{"AMQP answered at amqp://guest:xxxxx@" + up, "management API at http://" + down + " did not", "rabbitmq-plugins enable rabbitmq_management"} {
		if !strings.Contains(got, want) {
			t.Errorf("plugin off: %q lacks %q", got, want)
		}
	}
	if got := unanswered("amqp://guest:guest@"+down+"/", "http://"+up); !strings.Contains(got, "management API answered at http://"+up+" but AMQP at") {
		t.Errorf("AMQP down: %q", got)
	}
	if got := unanswered("amqp://guest:guest@"+down+"/", "http://"+down); got != "" {
		t.Errorf("both down: %q, want nothing (no broker answered says it)", got)
	}
}
