package ui

import (
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

func TestStatusLineNamesTheBrokerVersion(t *testing.T) {
	r := scenario()
	r.top.Broker = triage.NewBroker("4.0.5", nil)
	h := newHarness(t, Options{Reader: r}, 120, 30)
	h.mustShow("RabbitMQ 4.0.5")
}

// On 4.3 the read is free: the messages list and the message say how many
// counted deliveries (a crash, a closed channel) each message has left.
func TestQuorumMessagesShowPeeksLeftWhereTheReadIsFree(t *testing.T) {
	r := scenario()
	r.top.Broker = triage.NewBroker("4.3.6", []string{triage.FreeRequeueFlag})
	h := newHarness(t, Options{Reader: r}, 160, 40)
	h.openQueue("payments.parking")
	h.press("confirm") // the fake reader asks whenever a limit is set
	h.mustShow("RabbitMQ 4.3.6")
	h.press("open")
	h.mustShow("peeks", "dlqt's reads are free here")
	h.press("open")
	h.mustShow("delivery count", "3 of limit 5: 2 peeks left")
}

// A default limit is named as such before the first read.
func TestDeliveryCostDialogNamesADefaultLimit(t *testing.T) {
	r := scenario()
	r.top.Broker = triage.NewBroker("4.0.5", nil)
	h := newHarness(t, Options{Reader: r}, 120, 30)
	h.m.c.dialog = &costDialog{flow: h.m.flow, cost: triage.NewDeliveryCostError("payments.parking",
		triage.DeliveryCostOf(triage.Queue{Type: triage.QueueQuorum}, r.top.Broker), 2)}
	h.mustShow("delivery limit  20 (RabbitMQ's default: the queue sets none)")
}
