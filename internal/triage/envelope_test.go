package triage

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

const seed003Envelope = `{
  "message_id": "msg_01K5",
  "event_type": "invoice.issue.requested",
  "schema_version": 3,
  "occurred_at": "2026-09-21T14:40:00Z",
  "correlation_id": "cor_01K5",
  "payload_ref": "secure://messages/msg_01K5",
  "failure": {
    "reason_code": "customer_tax_profile_missing",
    "consumer": "invoice-worker",
    "consumer_version": "release-2026-09-21",
    "attempt": 4,
    "first_failed_at": "2026-09-21T14:40:05Z",
    "last_failed_at": "2026-09-21T14:44:31Z"
  }
}`

func TestDecodeEnvelope(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Envelope
	}{
		{"seed 003", seed003Envelope, Envelope{
			IsJSON: true, MessageID: "msg_01K5", EventType: "invoice.issue.requested", SchemaVersion: "3",
			OccurredAt: "2026-09-21T14:40:00Z", CorrelationID: "cor_01K5",
			Failure: &Failure{ReasonCode: "customer_tax_profile_missing", Consumer: "invoice-worker",
				ConsumerVersion: "release-2026-09-21", Attempt: 4,
				FirstFailedAt: "2026-09-21T14:40:05Z", LastFailedAt: "2026-09-21T14:44:31Z"},
		}},
		{"string schema and numeric-string attempt", `{"schema_version":"v2","failure":{"attempt":" 5 "}}`,
			Envelope{IsJSON: true, SchemaVersion: "v2", Failure: &Failure{Attempt: 5}}},
		{"float attempt and float schema", `{"schema_version":1.5,"failure":{"attempt":4.0}}`,
			Envelope{IsJSON: true, SchemaVersion: "1.5", Failure: &Failure{Attempt: 4}}},
		{"numeric message id", `{"message_id":12345}`, Envelope{IsJSON: true, MessageID: "12345"}},
		{"bad attempts read as zero", `{"failure":{"attempt":-3}}`, Envelope{IsJSON: true, Failure: &Failure{}}},
		{"non-numeric attempt", `{"failure":{"attempt":"four"}}`, Envelope{IsJSON: true, Failure: &Failure{}}},
		{"huge attempt", `{"failure":{"attempt":1e300}}`, Envelope{IsJSON: true, Failure: &Failure{}}},
		{"wrong types are missing", `{"message_id":{},"event_type":["a"],"occurred_at":true,"correlation_id":null,"failure":{"reason_code":7,"consumer":{}}}`,
			Envelope{IsJSON: true, Failure: &Failure{ReasonCode: "7"}}},
		{"failure not an object", `{"event_type":"a","failure":"boom"}`, Envelope{IsJSON: true, EventType: "a"}},
		{"empty failure", `{"failure":{}}`, Envelope{IsJSON: true, Failure: &Failure{}}},
		{"no fields", `{}`, Envelope{IsJSON: true}},
		{"leading whitespace", " \n\t{\"event_type\":\"x\"}\n", Envelope{IsJSON: true, EventType: "x"}},
		{"control characters sanitised", `{"event_type":"evil\u001b[2Jtype","message_id":"a\nb"}`,
			Envelope{IsJSON: true, EventType: `evil\x1b[2Jtype`, MessageID: `a\nb`}},
		{"bidi override sanitised", "{\"event_type\":\"abc\u202edef\"}", Envelope{IsJSON: true, EventType: `abc\u202edef`}},
		{"byte order mark", "\xef\xbb\xbf{\"event_type\":\"bom\"}", Envelope{IsJSON: true, EventType: "bom"}},
		{"array", `[{"message_id":"x"}]`, Envelope{}},
		{"scalar", `42`, Envelope{}},
		{"string", `"{}"`, Envelope{}},
		{"null", `null`, Envelope{}},
		{"not json", `order 42 failed`, Envelope{}},
		{"truncated json", `{"message_id":"x"`, Envelope{}},
		{"trailing garbage", `{"message_id":"x"} trailing`, Envelope{}},
		{"empty", ``, Envelope{}},
		{"binary", "\x00\x01\x02\xff{\"a\":1}", Envelope{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DecodeEnvelope([]byte(tc.body))
			if got.IsJSON != tc.want.IsJSON || got.MessageID != tc.want.MessageID || got.EventType != tc.want.EventType ||
				got.SchemaVersion != tc.want.SchemaVersion || got.OccurredAt != tc.want.OccurredAt || got.CorrelationID != tc.want.CorrelationID {
				t.Fatalf("DecodeEnvelope(%s) = %+v, want %+v", abbrev(tc.body), got, tc.want)
			}
			if (got.Failure == nil) != (tc.want.Failure == nil) {
				t.Fatalf("failure = %+v, want %+v", got.Failure, tc.want.Failure)
			}
			if got.Failure != nil && *got.Failure != *tc.want.Failure {
				t.Fatalf("failure = %+v, want %+v", *got.Failure, *tc.want.Failure)
			}
		})
	}
}

func TestDecodeEnvelopeHugeBodies(t *testing.T) {
	big := strings.Repeat("x", 4<<20)
	body := `{"event_type":"bulk.import","payload":"` + big + `","message_id":"` + strings.Repeat("m", 5000) + `"}`
	env := DecodeEnvelope([]byte(body))
	if !env.IsJSON || env.EventType != "bulk.import" {
		t.Fatalf("huge body: %+v", env)
	}
	if len(env.MessageID) > maxEnvelopeField+len("…") || !strings.HasPrefix(env.MessageID, "mmm") {
		t.Fatalf("message_id not bounded: %d bytes", len(env.MessageID))
	}

	deep := bytes.Repeat([]byte(`{"a":`), 20000)
	if env := DecodeEnvelope(deep); env.IsJSON {
		t.Fatalf("deeply nested garbage decoded as %+v", env)
	}
	deepArray := append([]byte(`{"a":`), bytes.Repeat([]byte("["), 100000)...)
	if env := DecodeEnvelope(deepArray); env.IsJSON {
		t.Fatalf("deep array decoded as %+v", env)
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	for _, s := range []string{
		seed003Envelope, `{}`, `[]`, `null`, `{"failure":{"attempt":"7"}}`, `{"schema_version":1e400}`,
		"{\"event_type\":\"\x1b]0;pwned\x07\"}", "\xff\xfe\x00", `{"message_id":"\u202e"}`, `{"failure":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		env := DecodeEnvelope(body)
		if want := decodeEnvelopeReference(body); !reflect.DeepEqual(env, want) {
			t.Fatalf("%q: decoded %+v, encoding/json says %+v", body, env, want)
		}
		assertClean(t, "envelope", env)
		if env.IsJSON && bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))[0] != '{' {
			t.Fatalf("IsJSON for a body that is not an object: %q", body)
		}
		if !env.IsJSON && (env != Envelope{}) {
			t.Fatalf("fields decoded from a non-object: %+v", env)
		}
		for _, s := range []string{env.MessageID, env.EventType, env.SchemaVersion, env.OccurredAt, env.CorrelationID} {
			if len(s) > maxEnvelopeField+len("…") {
				t.Fatalf("field of %d bytes", len(s))
			}
		}
		if env.Failure != nil && env.Failure.Attempt < 0 {
			t.Fatalf("negative attempt %d", env.Failure.Attempt)
		}
	})
}
