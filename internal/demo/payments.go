package demo

import (
	"context"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// paymentsFlow is the quorum half of broker dead-lettering: a capture
// consumer that keeps handing messages back (the naive "try again later")
// until the quorum queue's delivery limit makes the broker dead-letter them
// into payments.parking, itself a quorum queue with a delivery limit, which
// is what makes browsing it costly.
//
// It hands them back with basic.reject(requeue): from RabbitMQ 4.3 on a
// basic.nack with requeue no longer counts toward the delivery limit, so a
// nack loop would spin without a death; a reject counts on 3.10, 4.0 and 4.3
// alike (docs/ARCHITECTURE.md).
func paymentsFlow(ctx context.Context, e *flowEnv) (flowOutcome, error) {
	conn, pub, probe, base, now := e.conn, e.pub, e.probe, e.base, e.now

	captures := captureEvents(now)
	for _, m := range captures {
		if err := pub.publish(ctx, "", paymentsCapture, m); err != nil {
			return flowOutcome{}, err
		}
	}

	c, err := consume(conn, paymentsCapture)
	if err != nil {
		return flowOutcome{}, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for d := range c.deliveries { // closed by stop
			_ = d.Reject(true) // "the gateway timed out, try again"
		}
	}()
	want := base[paymentsParking] + len(captures)
	err = probe.waitDepth(ctx, paymentsParking, want)
	c.stop()
	<-done
	if err != nil {
		return flowOutcome{}, err
	}

	var parked []Produced
	for _, m := range captures {
		parked = append(parked, brokerDeath(m, paymentsCapture, triage.ReasonDeliveryLimit))
	}
	return flowOutcome{
		parked: []ParkingScenario{{
			Queue:            paymentsParking,
			Type:             triage.QueueQuorum,
			DeliveryLimit:    parkingDeliveryLimit,
			DeadLetteredFrom: []string{paymentsCapture},
			Messages:         parked,
		}},
		depths: map[string]int{paymentsParking: want, paymentsCapture: 0},
	}, nil
}

func captureEvents(now time.Time) []amqp.Publishing {
	const app, ev = "checkout", "order.payment.captured"
	_, a := event(now, app, "pay-0001", ev, 4, map[string]any{
		"order_id": "ORD-88412",
		"amount":   map[string]any{"value": 459000, "currency": "VND"},
		// The gateway call as the checkout service logged it, token and all.
		"gateway_request": map[string]any{
			"method": "POST",
			"url":    "https://psp.example/v2/captures",
			"headers": map[string]any{
				"Authorization":   "Bearer " + ScenarioBearerToken,
				"Idempotency-Key": "cap_ORD-88412",
			},
		},
	})
	_, b := event(now, app, "pay-0002", ev, 4, map[string]any{
		"order_id": "ORD-88415",
		"amount":   map[string]any{"value": 1290000, "currency": "VND"},
		"payer":    customer("cus_7710", "Võ Thanh Tùng", "tung.vo@example.com"),
	})
	return []amqp.Publishing{a, b}
}
