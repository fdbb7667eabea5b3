package brokertest

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// RejectUntilParked rejects with requeue every message of the quorum queue
// work until its x-delivery-limit dead-letters n of them into parked, so
// they arrive there with x-delivery-count past that limit (a reject counts
// on every version).
func RejectUntilParked(t testing.TB, conn *amqp.Connection, work, parked string, n int) {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if err := ch.Qos(n, 0, false); err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume(work, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(60 * time.Second)
	for Depth(t, conn, parked) < n {
		select {
		case d := <-ds:
			if err := d.Reject(true); err != nil {
				t.Fatal(err)
			}
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("parked %d of %d after 60 s", Depth(t, conn, parked), n)
		}
	}
}
