package broker

import (
	"runtime"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// toMessage keeps the delivery's body: turning a 32 MiB delivery into a
// message allocated another 32 MiB before, on every read and replay hold.
func TestToMessageMakesNoCopyOfTheBody(t *testing.T) {
	const size = 32 << 20
	d := amqp.Delivery{MessageId: "big", Body: make([]byte, size), Headers: amqp.Table{"k": "v"}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m := toMessage(d, "parked", 0)
	runtime.ReadMemStats(&after)
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 1<<20 {
		t.Errorf("toMessage of a %d MiB delivery allocated %.1f MiB", size>>20, float64(allocated)/(1<<20))
	}
	if len(m.Body) != size || &m.Body[0] != &d.Body[0] {
		t.Errorf("the message's body is not the delivery's")
	}
}
