package demo

import (
	"context"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// legacyFlow parks what applications and frameworks publish straight into a
// parking queue, with no broker death: the fault headers of Spring AMQP,
// MassTransit and NServiceBus, an x-reason-code, a plain-text body, a binary
// body, and two identical messages with no message id at all.
func legacyFlow(ctx context.Context, e *flowEnv) (flowOutcome, error) {
	pub, probe, base, now := e.pub, e.probe, e.base, e.now

	faults := legacyFaults(now)
	var parked []Produced
	for _, f := range faults {
		if err := pub.publish(ctx, "", legacyFailed, f.msg); err != nil {
			return flowOutcome{}, err
		}
		parked = append(parked, Produced{
			MessageID:  f.msg.MessageId,
			Reason:     triage.ReasonPublished,
			ReasonCode: f.code,
			EventType:  f.eventType,
		})
	}
	want := base[legacyFailed] + len(faults)
	if err := probe.waitDepth(ctx, legacyFailed, want); err != nil {
		return flowOutcome{}, err
	}
	return flowOutcome{
		parked: []ParkingScenario{{Queue: legacyFailed, Type: triage.QueueClassic, Messages: parked}},
		depths: map[string]int{legacyFailed: want},
	}, nil
}

type legacyFault struct {
	msg       amqp.Publishing
	code      string // the reason_code dlqt should find: the app's, else the failure's fingerprint
	eventType string
}

func legacyFaults(now time.Time) []legacyFault {
	var fs []legacyFault
	add := func(m amqp.Publishing, code, ev string, h amqp.Table) {
		m.Headers = h
		fs = append(fs, legacyFault{m, code, ev})
	}
	failedAt := now.Add(-40 * time.Second)

	// Spring AMQP's RepublishMessageRecoverer: the stack trace starts with the
	// exception's class name. The message text carries a colour escape.
	env, m := event(now, "ledger-service", "leg-0001", "ledger.entry.posted", 2, map[string]any{"entry_id": "JE-20261130-0042", "period": "2026-10"})
	add(m, "LedgerPeriodClosedException @ PostingService.post", env.EventType, amqp.Table{
		"x-exception-stacktrace": "com.acme.ledger.LedgerPeriodClosedException: ledger period 2026-10 is closed\n" +
			"\tat com.acme.ledger.PostingService.post(PostingService.java:118)\n" +
			"\tat com.acme.ledger.LedgerListener.onEntry(LedgerListener.java:42)\n",
		"x-exception-message":   "ledger period 2026-10 is closed " + ScenarioHeaderEscape + "(admin override required)",
		"x-original-exchange":   "ledger.exchange",
		"x-original-routingKey": "ledger.entry.posted",
	})

	// MassTransit's fault headers; the message text hides a bidi override.
	env, m = event(now, "shipping-service", "leg-0002", "customer.address.updated", 3, map[string]any{"customer_id": "cus_3310", "attachment": "proof.pdf"})
	add(m, "AddressValidationException @ AddressConsumer.Consume", env.EventType, amqp.Table{
		"MT-Fault-ExceptionType": "Acme.Shipping.AddressValidationException",
		"MT-Fault-Message":       "attachment rejected: invoice" + ScenarioBidi + "fdp.exe",
		"MT-Fault-StackTrace":    "at Acme.Shipping.AddressConsumer.Consume(ConsumeContext`1 context)",
		"MT-Fault-Timestamp":     failedAt.Format(time.RFC3339),
		"MT-Reason":              "fault",
	})

	// NServiceBus's error-queue headers.
	env, m = event(now, "crm-sync", "leg-0003", "customer.profile.synced", 2, map[string]any{"customer_id": "cus_4402"})
	add(m, "CustomerNotFoundException", env.EventType, amqp.Table{
		"NServiceBus.ExceptionInfo.ExceptionType": "Acme.Crm.CustomerNotFoundException",
		"NServiceBus.ExceptionInfo.Message":       "Customer cus_4402 does not exist in CRM",
		"NServiceBus.FailedQ":                     "crm-sync@legacy-host",
		"NServiceBus.TimeOfFailure":               failedAt.Format("2006-01-02 15:04:05:000000 Z"),
	})

	// A plain x-reason-code header.
	env, m = event(now, "webhook-gateway", "leg-0004", "webhook.received", 3, map[string]any{
		"provider": "psp.example",
		"headers":  map[string]any{"X-Signature": "t=1790000000,v1=deadbeef"},
	})
	add(m, "webhook_signature_invalid", env.EventType, amqp.Table{"x-reason-code": "webhook_signature_invalid"})

	// A plain-text log line with a password and raw escape sequences.
	fs = append(fs, legacyFault{msg: amqp.Publishing{
		ContentType: "text/plain", DeliveryMode: amqp.Persistent, MessageId: "leg-0005", Timestamp: now, AppId: "legacy-importer",
		Body: []byte("2026-11-30T09:58:12Z ERROR importer row 1187: cannot map account (db user=svc_import password=" +
			ScenarioSecret + ") " + ScenarioEscape + ScenarioClear + "\n"),
	}})

	// A binary body: a truncated zip with an escape sequence inside.
	fs = append(fs, legacyFault{msg: amqp.Publishing{
		ContentType: "application/octet-stream", DeliveryMode: amqp.Persistent, MessageId: "leg-0006", Timestamp: now, AppId: "legacy-importer",
		Body: append([]byte{'P', 'K', 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00, 0xff, 0xfe, 0x00, 0x9b}, []byte(ScenarioClear+"\x00\x01\x02")...),
	}})

	// Two identical messages with no message id anywhere: their identity
	// can only be a hash of what they carry.
	anon := mustJSON(scenarioEnvelope{
		EventType: "legacy.row.imported", SchemaVersion: 2, OccurredAt: now.Add(-time.Hour).Format(time.RFC3339),
		Data: map[string]any{"row": 1188, "account": "AC-001188"},
	})
	for range 2 {
		fs = append(fs, legacyFault{
			msg: amqp.Publishing{
				ContentType: "application/json", DeliveryMode: amqp.Persistent, AppId: "legacy-importer",
				Headers: amqp.Table{"reason_code": "legacy_row_unmapped"}, Body: anon,
			},
			code: "legacy_row_unmapped", eventType: "legacy.row.imported",
		})
	}
	return fs
}
