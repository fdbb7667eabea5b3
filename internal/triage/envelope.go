package triage

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"unicode/utf8"
)

// maxEnvelopeField bounds every string taken from an envelope: ids and names
// longer than this are not ids but payload, and would flood a screen.
const maxEnvelopeField = 1024

// DecodeEnvelope reads the diagnostic envelope (message_id, event_type,
// failure block; see Envelope) from a body, tolerating missing fields, other
// shapes, non-JSON and binary bodies: a parked message is whatever the
// producer sent, and dlqt must still show it.
func DecodeEnvelope(body []byte) Envelope {
	// .NET producers may start a UTF-8 body with a byte order mark.
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return Envelope{}
	}
	raw := objectFields(trimmed)
	env := Envelope{
		IsJSON:        true,
		MessageID:     envText(raw["message_id"]),
		EventType:     envText(raw["event_type"]),
		SchemaVersion: envText(raw["schema_version"]),
		OccurredAt:    envText(raw["occurred_at"]),
		CorrelationID: envText(raw["correlation_id"]),
		TraceID:       envText(raw["trace_id"]),
		TraceParent:   envText(raw["traceparent"]),
	}
	if f := raw["failure"]; len(f) > 0 && f[0] == '{' {
		failure := objectFields(f)
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
	case c == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw):
		return oneLine(string(raw[1:len(raw)-1]), maxEnvelopeField) // nothing to unescape
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

// envelopeKeys are the members of an envelope (and of its failure block)
// that DecodeEnvelope reads; objectFields keeps only these.
var envelopeKeys = map[string]bool{
	"message_id": true, "event_type": true, "schema_version": true, "occurred_at": true, "correlation_id": true,
	"failure": true, "reason_code": true, "consumer": true, "consumer_version": true, "attempt": true,
	"first_failed_at": true, "last_failed_at": true, "trace_id": true, "traceparent": true,
}

// objectFields returns the members of obj, a JSON object json.Valid has
// accepted, that envelopeKeys names: what json.Unmarshal into a map of
// json.RawMessage gives for them (keys unescaped, the last of duplicates
// wins), without decoding the rest, which is most of a large body.
func objectFields(obj []byte) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		end := stringEnd(obj, i)
		key := obj[i:end]
		i = skipSpace(obj, end)
		i = skipSpace(obj, i+1) // the colon
		vEnd := valueEnd(obj, i)
		if name := keyText(key); envelopeKeys[name] {
			out[name] = json.RawMessage(obj[i:vEnd])
		}
		i = skipSpace(obj, vEnd)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return out
}

// keyText unquotes a member name, through encoding/json only when it has
// escapes or bytes that are not UTF-8 (which it replaces).
func keyText(quoted []byte) string {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(quoted, &s)
	return s
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the string that starts at b[i] ('"').
func stringEnd(b []byte, i int) int {
	for k := i + 1; k < len(b); k++ {
		switch b[k] {
		case '\\':
			k++
		case '"':
			return k + 1
		}
	}
	return len(b)
}

// valueEnd is the index after the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for k := i; k < len(b); k++ {
			switch b[k] {
			case '"':
				k = stringEnd(b, k) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return k + 1
				}
			}
		}
		return len(b)
	}
	k := i
	for k < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[k])) {
		k++
	}
	return k
}
