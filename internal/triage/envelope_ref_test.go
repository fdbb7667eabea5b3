package triage

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// decodeEnvelopeReference is DecodeEnvelope as it was before objectFields:
// the whole body decoded by encoding/json into a map. The fast decoder must
// agree with it on every body (FuzzDecodeEnvelope checks).
func decodeEnvelopeReference(body []byte) Envelope {
	var raw map[string]json.RawMessage
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &raw) != nil || raw == nil {
		return Envelope{}
	}
	text := func(r json.RawMessage) string {
		if len(r) > 0 && r[0] == '"' {
			var s string
			if json.Unmarshal(r, &s) == nil {
				return oneLine(s, maxEnvelopeField)
			}
			return ""
		}
		return envText(r)
	}
	env := Envelope{
		IsJSON: true, MessageID: text(raw["message_id"]), EventType: text(raw["event_type"]),
		SchemaVersion: text(raw["schema_version"]), OccurredAt: text(raw["occurred_at"]), CorrelationID: text(raw["correlation_id"]),
	}
	var failure map[string]json.RawMessage
	if f := raw["failure"]; len(f) > 0 && f[0] == '{' && json.Unmarshal(f, &failure) == nil {
		env.Failure = &Failure{
			ReasonCode: text(failure["reason_code"]), Consumer: text(failure["consumer"]),
			ConsumerVersion: text(failure["consumer_version"]), Attempt: envAttempt(failure["attempt"]),
			FirstFailedAt: text(failure["first_failed_at"]), LastFailedAt: text(failure["last_failed_at"]),
		}
	}
	return env
}

func TestDecodeEnvelopeAgreesWithEncodingJSON(t *testing.T) {
	for _, body := range []string{
		seed003Envelope, `{}`, ` { } `, `{"message_id":"a","message_id":"b"}`, `{"message\u005fid":"esc"}`,
		`{"event_type":"caf\u00e9 \"q\" \\ x"}`, "{\"event_type\":\"\xff\xfe bad utf8\"}", "{\"\xffkey\":1,\"event_type\":2}",
		`{"failure":{"reason_code":"A","reason_code":"B","attempt":"12"},"failure":{"attempt":3}}`,
		`{"a":[1,{"b":"}]\""}],"event_type":"after nesting","c":{"d":[[]]}}`, `{"schema_version":-1.5e3,"x":true,"y":null}`,
		`{"message_id":{"nested":"obj"}}`, `{"message_id":"a"} trailing`, `{"message_id":"a",}`, "\xef\xbb\xbf{\"event_type\":\"bom\"}",
	} {
		if got, want := DecodeEnvelope([]byte(body)), decodeEnvelopeReference([]byte(body)); !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %+v\nwant %+v", body, got, want)
		}
	}
}

func BenchmarkDecodeEnvelope(b *testing.B) {
	body := parkedMessage(7, 1024).Body
	b.Run("objectFields", func(b *testing.B) {
		for b.Loop() {
			DecodeEnvelope(body)
		}
	})
	b.Run("encoding-json-map", func(b *testing.B) {
		for b.Loop() {
			decodeEnvelopeReference(body)
		}
	})
}
