package broker

import (
	"time"

	"github.com/dlqt/dlqt/internal/triage"
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
// when the hold is released: consumers cancelled first, then all requeued
// in delivery order by one Nack(0, multiple).
//
// Not where a requeue is free but a delivery limit applies (4.3 and later):
// there each message an ack's credit brings in after the read would be held
// unselected, and a kill -9 of dlqt (a close still counts) would cost it a
// delivery it may not have, dropping it, though the plan named only the
// messages up to the last selected one (before: m-000002 lost on 4.3.6 in
// TestReplayKilledMidCanaryLosesNoMessageItDidNotSelect). Such a hold
// cancels its consumers after the read, like a classic queue's; what they
// hold stays unacked on the channel and goes back by the same Nack. Where a
// requeue counts (3.x, 4.0-4.2) the release costs every message held a
// delivery anyway, consented to before any read (DeliveryCost.AsksFirst),
// and the consumers stay up for the node loss above.
func keepsConsumersUp(cost triage.DeliveryCost) bool {
	return !cost.Limited || cost.RequeueCounts
}

// keepConsuming keeps the hold's consumers up; whatever they are sent from
// now on stays unacked with the rest until the hold is released.
func (r *Replay) keepConsuming(w *window) {
	h := r.held
	h.mu.Lock()
	h.win, h.reading = w, make(chan struct{})
	h.mu.Unlock()
	w.rest() // unacked, released with the rest
	go func() {
		defer close(h.reading)
		for {
			select {
			case <-w.merged:
			case <-w.gone:
				return
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
