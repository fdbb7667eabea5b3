package redact

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage/redact/redacttest"
)

// benchLog is a realistic free-text payload: a consumer's error log with ids,
// timestamps, versions and amounts around a few secrets.
var benchLog = strings.Repeat(`2026-11-30T09:41:13.123Z ERROR payments-worker v3.4.1 order=ORD-2024-000123 `+
	`msg_id=9f1c2d3e-4b5a-6c7d-8e9f-0a1b2c3d4e5f amount=129.90 EUR attempt=5 host=10.0.3.17 `+
	`upstream https://gateway.example/v2/capture timed out after 30s; commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 `+
	`customer jane.doe@example.com card `+redacttest.Visa+` auth="Bearer `+redacttest.Opaque+`"
`, 4)

var benchJSON = []byte(`{
  "message_id": "9f1c2d3e-4b5a-6c7d-8e9f-0a1b2c3d4e5f",
  "event_type": "payment.captured",
  "schema_version": "2.1",
  "occurred_at": "2026-11-30T09:41:12.345Z",
  "correlation_id": "c-7f3a9b",
  "customer": {"id": 884213, "email": "jane.doe@example.com", "name": "Nguyen Van An"},
  "payment": {"amount": 129.90, "currency": "EUR", "card_number": "4111111111111111",
              "authorization": "Bearer ` + redacttest.JWT + `"},
  "items": [{"sku": "A-1", "qty": 2, "price": 19.95}, {"sku": "B-7", "qty": 1, "price": 89.99}],
  "failure": {"reason_code": "PAYMENT_GATEWAY_TIMEOUT", "consumer": "payments-worker",
              "consumer_version": "3.4.1", "attempt": 5,
              "first_failed_at": "2026-11-30T09:41:13Z", "last_failed_at": "2026-11-30T09:46:13Z",
              "detail": "upstream https://gateway.example/v2/capture timed out after 30s"}
}`)

var benchHeaders = headers{
	"x-death":        []any{headers{"count": int64(5), "queue": "orders.q", "reason": "rejected", "time": "2026-11-30T09:41:13Z"}},
	"x-trace-id":     "9f1c2d3e-4b5a-6c7d-8e9f-0a1b2c3d4e5f",
	"authorization":  "Bearer " + redacttest.JWT,
	"x-tenant":       "acme-eu",
	"x-app-version":  "3.4.1",
	"x-retry-count":  int64(5),
	"x-customer-ref": "CUST-000884213",
}

func BenchmarkText(b *testing.B) {
	r := New()
	b.SetBytes(int64(len(benchLog)))
	for b.Loop() {
		r.Text(benchLog)
	}
}

func BenchmarkJSON(b *testing.B) {
	r := New()
	b.SetBytes(int64(len(benchJSON)))
	for b.Loop() {
		if _, _, _, err := r.JSON(benchJSON, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHeaders(b *testing.B) {
	r := New()
	for b.Loop() {
		Headers(benchHeaders, r)
	}
}
