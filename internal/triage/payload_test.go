package triage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/redact/redacttest"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/triage/sanitize/sanitizetest"
)

func TestRenderPayloadJSON(t *testing.T) {
	body := []byte(`{"message_id":"m-1","customer":{"email":"jane@example.com","password":"hunter2"},"amount":12.50}`)
	p := RenderPayload(body, "application/json", redact.New())
	want := "{\n  \"message_id\": \"m-1\",\n  \"customer\": {\n    \"email\": \"j***@example.com\",\n    \"password\": \"[REDACTED]\"\n  },\n  \"amount\": 12.50\n}"
	if p.Text != want || p.Binary || p.Redactions != 2 {
		t.Errorf("got %q binary=%v redactions=%d\nwant %q", p.Text, p.Binary, p.Redactions, want)
	}
}

func TestRenderPayloadPlainText(t *testing.T) {
	body := []byte("login failed for jane@example.com\r\npassword=hunter2\n\x1b]0;pwned\x07\x1b[2J done\u202e")
	p := RenderPayload(body, "text/plain", redact.New())
	want := "login failed for j***@example.com\npassword=[REDACTED]\n" + `\x1b]0;pwned\x07\x1b[2J done\u202e`
	if p.Text != want || p.Binary || p.Redactions != 2 {
		t.Errorf("got %q binary=%v redactions=%d\nwant %q", p.Text, p.Binary, p.Redactions, want)
	}
	sanitizetest.AssertSafe(t, p.Text, true)
}

func TestRenderPayloadWithoutRedactorStillSanitises(t *testing.T) {
	p := RenderPayload([]byte(`{"password":"hunter2","x":"\u001b[2J"}`), "", nil)
	want := "{\n  \"password\": \"hunter2\",\n  \"x\": \"\\u001b[2J\"\n}"
	if p.Text != want || p.Redactions != 0 {
		t.Errorf("got %q (%d), want %q", p.Text, p.Redactions, want)
	}
	p = RenderPayload([]byte("a\x1b[2Jb"), "", nil)
	if p.Text != `a\x1b[2Jb` {
		t.Errorf("got %q", p.Text)
	}
}

func TestRenderPayloadBinary(t *testing.T) {
	body := []byte("\x00\x01\x02\x03Hello, world!\xff\xfe\x10\x11\x12\x13\x14\x15\x16")
	p := RenderPayload(body, "", redact.New())
	want := "00000000  00 01 02 03 48 65 6c 6c  6f 2c 20 77 6f 72 6c 64  |....Hello, world|\n" +
		"00000010  21 ff fe 10 11 12 13 14  15 16                    |!.........|\n" +
		"0000001a"
	if !p.Binary || p.Text != want {
		t.Errorf("got binary=%v\n%s\nwant\n%s", p.Binary, p.Text, want)
	}
}

func TestRenderPayloadBinaryHidesSecrets(t *testing.T) {
	body := append([]byte{0x0a, 0x00, 0x01, 0x02}, []byte("key "+redacttest.AWSKey)...)
	body = append(body, 0xff, 0x00)
	p := RenderPayload(body, "application/x-protobuf", redact.New())
	if !p.Binary || p.Redactions != 1 {
		t.Fatalf("binary=%v redactions=%d", p.Binary, p.Redactions)
	}
	if strings.Contains(p.Text, "AKIA") || strings.Contains(p.Text, "41 4b 49 41") {
		t.Errorf("secret visible in the dump:\n%s", p.Text)
	}
	if !strings.Contains(p.Text, "|....key ******") || !strings.Contains(p.Text, " ** ") {
		t.Errorf("masked bytes not shown as * and **:\n%s", p.Text)
	}
}

func TestRenderPayloadBounds(t *testing.T) {
	big := bytes.Repeat([]byte{0x00, 0xff}, 5000)
	p := RenderPayload(big, "", nil)
	if !p.Binary || !strings.HasSuffix(p.Text, fmt.Sprintf("\n... %d more bytes", len(big)-maxDumpBytes)) {
		t.Errorf("binary not bounded: ends %q", p.Text[max(0, len(p.Text)-60):])
	}
	if lines := strings.Count(p.Text, "\n"); lines != maxDumpBytes/16+1 {
		t.Errorf("%d lines in the dump, want %d", lines, maxDumpBytes/16+1)
	}

	text := strings.Repeat("Đơn hàng ", maxTextBytes/8)
	p = RenderPayload([]byte(text), "", nil)
	shown := len(text) - len(sanitize.TrimPartialRune([]byte(text[:maxTextBytes])))
	if p.Binary || !strings.HasSuffix(p.Text, fmt.Sprintf("\n... %d more bytes not shown", shown)) {
		t.Errorf("text not bounded: ends %q", p.Text[max(0, len(p.Text)-60):])
	}
	sanitizetest.AssertSafe(t, p.Text, true)

	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	p = RenderPayload([]byte(deep), "application/json", nil)
	if len(p.Text) > maxTextBytes+200 {
		t.Errorf("deep JSON rendered to %d bytes", len(p.Text))
	}
}

var payloadSeeds = []string{
	`{"password":"hunter2","n":[1,2.5,{"token":{"a":1}}]}`,
	`[{"email":"a@b.co"},"Bearer ` + redacttest.JWT + `"]`,
	`"top-level string"`, `42`, `null`, `{"a":"\u001b[2J\u202e"}`,
	"plain text password=x\r\n\x1b]0;pwned\x07",
	"\x00\x01\x02binary\xff",
	"-----BEGIN PRIVATE KEY-----\nabc",
	"4111 1111 1111 1111",
	"",
}

func FuzzRenderPayload(f *testing.F) {
	for _, s := range payloadSeeds {
		f.Add([]byte(s), "")
		f.Add([]byte(s), "application/json")
	}
	r := redact.New()
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		for _, red := range []*redact.Redactor{r, nil} {
			p := RenderPayload(body, ct, red)
			sanitizetest.AssertSafe(t, p.Text, true)
			if p.Binary || !json.Valid(body) || strings.HasSuffix(p.Text, " more bytes not shown") {
				continue // only whole JSON renderings must be JSON
			}
			if !json.Valid([]byte(p.Text)) {
				t.Fatalf("valid JSON %q rendered as invalid JSON %q", body, p.Text)
			}
			if red == nil && !sameJSON(body, []byte(p.Text)) {
				t.Fatalf("without redaction, %q rendered as different JSON %q", body, p.Text)
			}
		}
	})
}

// sameJSON reports whether a and b decode to the same value, numbers compared
// by their text.
func sameJSON(a, b []byte) bool {
	decode := func(data []byte) (any, error) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		return v, err
	}
	va, errA := decode(a)
	vb, errB := decode(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

// A realistic 1 KiB dead-lettered envelope (seed 003 shape).
var benchEnvelope = []byte(`{
  "message_id": "9f1c2d3e-4b5a-6c7d-8e9f-0a1b2c3d4e5f",
  "event_type": "payment.captured",
  "schema_version": "2.1",
  "occurred_at": "2026-11-30T09:41:12.345Z",
  "correlation_id": "c-7f3a9b",
  "customer": {"id": 884213, "email": "jane.doe@example.com", "name": "Nguyễn Văn An"},
  "payment": {"amount": 129.90, "currency": "EUR", "card_number": "4111111111111111",
              "authorization": "Bearer ` + redacttest.JWT + `"},
  "items": [{"sku": "A-1", "qty": 2, "price": 19.95}, {"sku": "B-7", "qty": 1, "price": 89.99}],
  "failure": {"reason_code": "PAYMENT_GATEWAY_TIMEOUT", "consumer": "payments-worker",
              "consumer_version": "3.4.1", "attempt": 5,
              "first_failed_at": "2026-11-30T09:41:13Z", "last_failed_at": "2026-11-30T09:46:13Z",
              "detail": "upstream https://gateway.example/v2/capture timed out after 30s"}
}`)

func BenchmarkRenderPayload(b *testing.B) {
	r := redact.New()
	b.SetBytes(int64(len(benchEnvelope)))
	for b.Loop() {
		RenderPayload(benchEnvelope, "application/json", r)
	}
}

// Whatever surrounds a secret, it must not be readable in what is shown.
func FuzzRenderPayloadHidesPlantedSecrets(f *testing.F) {
	f.Add("order failed", "retrying", uint8(0))
	f.Add(`"password": "`, `"}`, uint8(1))
	f.Add("Bearer", "\x1b[2J", uint8(2))
	f.Add("\xff\x00", "tail", uint8(3))
	f.Add("-----BEGIN", "x@y", uint8(4))
	secrets := []struct{ planted, hidden string }{
		{redacttest.JWT, redacttest.JWT[40:]},
		{redacttest.GitHub, redacttest.GitHub},
		{redacttest.AWSKey, redacttest.AWSKey},
		{redacttest.Slack, redacttest.Slack},
		{redacttest.Google, redacttest.Google},
		{redacttest.Stripe, redacttest.Stripe},
		{redacttest.Visa, redacttest.Visa},
		{"Bearer " + redacttest.Opaque, redacttest.Opaque},
		{"amqp://orders:s3cr3tpw@rabbit/", "s3cr3tpw"},
		{redacttest.PEM, "MIIEowIBAAKCAQEA1c2J0ZXN0a2V5"},
		{"jane.doe@example.com", "jane.doe"},
	}
	r := redact.New()
	f.Fuzz(func(t *testing.T, prefix, suffix string, which uint8) {
		s := secrets[int(which)%len(secrets)]
		text := prefix + " " + s.planted + " " + suffix
		quoted, _ := json.Marshal(text)
		for _, body := range []string{text, `{"note":` + string(quoted) + `}`} {
			p := RenderPayload([]byte(body), "", r)
			if strings.Contains(p.Text, s.hidden) {
				t.Fatalf("%q visible in the rendering of %q:\n%s", s.hidden, body, p.Text)
			}
		}
	})
}
