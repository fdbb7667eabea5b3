package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// billingFlow is broker dead-lettering at its plainest: three work queues
// die into one fanout graveyard, billing.parking, each for its own broker
// reason. Invoices are rejected by their consumer, reminders expire (their
// DLX comes from a policy), exports overflow a max-length queue.
func billingFlow(ctx context.Context, e *flowEnv) (flowOutcome, error) {
	conn, pub, probe, base, now := e.conn, e.pub, e.probe, e.base, e.now

	invoices, reminders, exports := invoiceEvents(now), reminderEvents(now), exportEvents(now)
	for _, batch := range []struct {
		queue string
		msgs  []amqp.Publishing
	}{{billingInvoices, invoices}, {billingReminders, reminders}, {billingExports, exports}} {
		for _, m := range batch.msgs {
			if err := pub.publish(ctx, "", batch.queue, m); err != nil {
				return flowOutcome{}, err
			}
		}
	}

	var parked []Produced
	rejected, err := runInvoiceWorker(ctx, conn, len(invoices))
	if err != nil {
		return flowOutcome{}, err
	}
	for _, m := range rejected {
		parked = append(parked, brokerDeath(m, billingInvoices, triage.ReasonRejected))
	}
	for _, m := range reminders {
		parked = append(parked, brokerDeath(m, billingReminders, triage.ReasonExpired))
	}
	// The queue drops from its head: the oldest messages die, the newest
	// stay. Whatever a previous call left there dies first.
	dropped := base[billingExports] + len(exports) - exportsMaxLength
	for _, m := range exports[:len(exports)-exportsMaxLength] {
		parked = append(parked, brokerDeath(m, billingExports, triage.ReasonMaxlen))
	}

	want := base[billingParking] + len(rejected) + len(reminders) + dropped
	if err := probe.waitDepth(ctx, billingParking, want); err != nil {
		return flowOutcome{}, err
	}
	return flowOutcome{
		parked: []ParkingScenario{{
			Queue:            billingParking,
			Type:             triage.QueueClassic,
			DeadLetteredFrom: []string{billingExports, billingInvoices, billingReminders},
			Messages:         parked,
		}},
		depths: map[string]int{
			billingParking:   want,
			billingInvoices:  0,
			billingReminders: 0,
			billingExports:   exportsMaxLength,
		},
	}, nil
}

// runInvoiceWorker is the invoice service's consumer: it cannot issue an
// invoice for a customer without a tax id, and rejects it without requeue.
// It returns the messages it rejected.
func runInvoiceWorker(ctx context.Context, conn *amqp.Connection, expect int) ([]amqp.Publishing, error) {
	c, err := consume(conn, billingInvoices)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	var rejected []amqp.Publishing
	for range expect {
		d, err := c.next(ctx)
		if err != nil {
			return nil, err
		}
		var env scenarioEnvelope
		if err := json.Unmarshal(d.Body, &env); err != nil {
			return nil, fmt.Errorf("invoice worker: %s: %w", d.MessageId, err)
		}
		if taxID, _ := env.Data["tax_id"].(string); taxID != "" {
			err = d.Ack(false)
		} else {
			err = d.Reject(false)
			rejected = append(rejected, amqp.Publishing{MessageId: d.MessageId, Type: d.Type})
		}
		if err != nil {
			return nil, err
		}
	}
	return rejected, nil
}

// brokerDeath is the expectation for a message the broker dead-lettered once.
func brokerDeath(m amqp.Publishing, queue string, reason triage.Reason) Produced {
	return Produced{
		MessageID: m.MessageId,
		Reason:    reason,
		EventType: m.Type,
		Deaths:    []DeathStep{{Queue: queue, Reason: reason}},
	}
}

func invoiceEvents(now time.Time) []amqp.Publishing {
	const app, ev = "invoice-api", "invoice.issue.requested"
	invoice := func(n int, taxID string, cust map[string]any) map[string]any {
		return map[string]any{
			"invoice_id": fmt.Sprintf("INV-2026-11-%04d", n),
			"amount":     map[string]any{"value": 1250000 * n, "currency": "VND"},
			"tax_id":     taxID,
			"customer":   cust,
		}
	}
	var ms []amqp.Publishing
	add := func(id string, schema int, data map[string]any) {
		_, p := event(now, app, id, ev, schema, data)
		ms = append(ms, p)
	}
	add("inv-0001", 3, invoice(1, "0312345678", customer("cus_1001", "Công ty TNHH Sao Mai", "ketoan@saomai.example")))

	d := invoice(2, "", customer("cus_1042", "Lê Thị Hồng", ScenarioEmail))
	d["payment_method"] = map[string]any{"type": "card", "card_number": ScenarioCard, "expiry": "12/29"}
	add("inv-0002", 3, d)

	// A customer name that would retitle the terminal and clear it.
	add("inv-0003", 3, invoice(3, "", customer("cus_1043", "Nguyễn Văn An"+ScenarioEscape+ScenarioClear, "an.nguyen@example.org")))

	d = invoice(4, "", customer("cus_1044", "Phạm Quốc Bảo", "bao.pham@example.org"))
	d["portal_session"] = map[string]any{"token": ScenarioJWT}
	d["portal_login"] = map[string]any{"username": "ketoan.acme", "password": ScenarioSecret}
	add("inv-0004", 2, d)

	add("inv-0005", 3, invoice(5, "0398765432", customer("cus_1005", "Hợp tác xã Bình Minh", "hoadon@binhminh.example")))
	return ms
}

func reminderEvents(now time.Time) []amqp.Publishing {
	const app, ev = "dunning-scheduler", "invoice.reminder.due"
	_, a := event(now, app, "rem-0001", ev, 2, map[string]any{
		"invoice_id": "INV-2026-10-0917",
		"due_date":   "2026-11-15",
		"note":       "customer asked us to charge card " + ScenarioCard + " again",
	})
	_, b := event(now, app, "rem-0002", ev, 2, map[string]any{
		"invoice_id": "INV-2026-10-0921",
		"due_date":   "2026-11-20",
		"customer":   customer("cus_0921", "Đỗ Minh Châu", "chau.do@example.net"),
	})
	return []amqp.Publishing{a, b}
}

func exportEvents(now time.Time) []amqp.Publishing {
	const app, ev = "billing-reports", "billing.export.requested"
	var ms []amqp.Publishing
	for n := 1; n <= 5; n++ {
		data := map[string]any{"period": "2026-11", "format": "csv", "batch": n}
		if n == 1 {
			data["destination"] = map[string]any{"url": "sftp://exports.partner.example/billing", "api_key": ScenarioAPIKey}
		}
		_, p := event(now, app, fmt.Sprintf("exp-%04d", n), ev, 4, data)
		ms = append(ms, p)
	}
	return ms
}
