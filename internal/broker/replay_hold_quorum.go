package broker

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A quorum queue (RabbitMQ 3.x) gives back the messages of a consumer whose
// node is lost only while that consumer is up: the messages a cancelled
// consumer still holds stay with it, unreachable (0 ready, 1 consumer),
// until the queue's leader changes after that node is back. A hold of a
// quorum queue therefore keeps its consumer up until it is released, so a
// kill -9 of the node dlqt holds through puts every held message back.
//
// An up consumer is sent more messages as its acks and requeues give credit
// back: those, and the messages read but not selected, are kept unacked
// too (a requeue would only bring them straight back), and all go back
// when the hold is released: consumer cancelled first, then every one
// requeued in delivery order.

// keepConsuming keeps the hold's consumer up, with put (read, not
// selected) and whatever it is sent from now on held as spare.
func (r *Replay) keepConsuming(put []uint64, deliveries <-chan amqp.Delivery) {
	h := r.held
	h.mu.Lock()
	h.spare, h.consumer, h.reading = put, r.consumerTag(), make(chan struct{})
	h.mu.Unlock()
	go func() {
		defer close(h.reading)
		for d := range deliveries {
			h.mu.Lock()
			h.spare = append(h.spare, d.DeliveryTag)
			h.mu.Unlock()
		}
	}()
}

// stopConsuming cancels a consumer kept up and waits, at most
// releaseWait, until what the broker sent before the cancel-ok is in.
func (r *Replay) stopConsuming() {
	h := r.held
	h.mu.Lock()
	tag, reading := h.consumer, h.reading
	h.consumer = ""
	h.mu.Unlock()
	if tag == "" {
		return
	}
	_ = h.ch.Cancel(tag, false)
	select {
	case <-reading:
	case <-time.After(releaseWait):
	}
}
