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

// keepConsuming keeps the hold's consumers up, with put (read, not
// selected), the deliveries w has not handed out, and whatever they are
// sent from now on held as spare.
func (r *Replay) keepConsuming(put []uint64, w *window) {
	h := r.held
	h.mu.Lock()
	h.spare, h.win, h.reading = put, w, make(chan struct{})
	for _, d := range w.rest() {
		h.spare = append(h.spare, d.DeliveryTag)
	}
	h.mu.Unlock()
	spare := func(d amqp.Delivery) {
		h.mu.Lock()
		h.spare = append(h.spare, d.DeliveryTag)
		h.mu.Unlock()
	}
	go func() {
		defer close(h.reading)
		for {
			select {
			case d := <-w.merged:
				spare(d)
			case <-w.gone:
				for {
					select {
					case d := <-w.merged:
						spare(d)
					default:
						return
					}
				}
			}
		}
	}()
}

// stopConsuming cancels the consumers kept up and waits, at most
// releaseWait, until what the broker sent before the cancel-oks is in.
func (r *Replay) stopConsuming() {
	h := r.held
	h.mu.Lock()
	w, reading := h.win, h.reading
	h.win = nil
	h.mu.Unlock()
	if w == nil {
		return
	}
	for _, tag := range w.tags {
		_ = h.ch.Cancel(tag, false)
	}
	select {
	case <-reading:
	case <-time.After(releaseWait):
	}
	w.stop()
}
