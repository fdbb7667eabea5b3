package triage

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
)

// maxEnvelopeField bounds every string taken from an envelope: ids and names
// longer than this are not ids but payload, and would flood a screen.
const maxEnvelopeField = 1024

// DecodeEnvelope reads the seed-003 envelope from a body, tolerating missing
// fields, other shapes, non-JSON and binary bodies.
func DecodeEnvelope(body []byte) Envelope {
	var raw map[string]json.RawMessage
	// .NET producers may start a UTF-8 body with a byte order mark.
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &raw) != nil || raw == nil {
		return Envelope{}
	}
	env := Envelope{
		IsJSON:        true,
		MessageID:     envText(raw["message_id"]),
		EventType:     envText(raw["event_type"]),
		SchemaVersion: envText(raw["schema_version"]),
		OccurredAt:    envText(raw["occurred_at"]),
		CorrelationID: envText(raw["correlation_id"]),
	}
	var failure map[string]json.RawMessage
	if f := raw["failure"]; len(f) > 0 && f[0] == '{' && json.Unmarshal(f, &failure) == nil {
		env.Failure = &Failure{
			ReasonCode:      envText(failure["reason_code"]),
			Consumer:        envText(failure["consumer"]),
			ConsumerVersion: envText(failure["consumer_version"]),
			Attempt:         envAttempt(failure["attempt"]),
			FirstFailedAt:   envText(failure["first_failed_at"]),
			LastFailedAt:    envText(failure["last_failed_at"]),
		}
	}
	return env
}

// envText reads a JSON string or number as text ("schema_version": 3 and
// "3" mean the same); any other JSON value is treated as missing. raw was
// validated by the enclosing Unmarshal, so a number is its own text.
func envText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return oneLine(s, maxEnvelopeField)
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return oneLine(string(raw), maxEnvelopeField)
	}
	return ""
}

// envAttempt reads failure.attempt: a number or a numeric string. Negative or
// absurd values are not attempts and read as 0.
func envAttempt(raw json.RawMessage) int {
	if len(raw) == 0 {
		return 0
	}
	text := string(raw)
	if raw[0] == '"' && json.Unmarshal(raw, &text) != nil {
		return 0
	}
	n, ok := intOf(strings.TrimSpace(text))
	if !ok || n < 0 || n > math.MaxInt32 {
		return 0
	}
	return int(n)
}
