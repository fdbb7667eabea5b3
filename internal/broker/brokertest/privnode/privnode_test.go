package privnode_test

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
)

// One boot exercises every fault the helper offers, in the order tests use
// them, and proves each one reaches the node.
func TestPrivateNodeFaults(t *testing.T) {
	n := privnode.Start(t)
	if n.AMQPURL == "amqp://guest:guest@127.0.0.1:5672/" {
		t.Fatal("the private node took the shared node's port")
	}
	conn, err := amqp.Dial(n.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	n.WaitConnections(1)
	if got := n.CloseAllConnections(); got != 1 {
		t.Errorf("closed %d connections, want 1", got)
	}
	if e := <-closed; e == nil {
		t.Error("the connection closed without an error")
	}

	n.SetMemoryAlarm()
	n.ClearMemoryAlarm()
	n.Restart()
	n.Kill()
	if _, err := amqp.Dial(n.AMQPURL); err == nil {
		t.Error("a killed node still accepts connections")
	}
}
