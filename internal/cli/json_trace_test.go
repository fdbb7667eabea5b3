package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// messages --json carries the trace id and how a compressed body was read.
func TestMessageLinesCarryTraceIDAndBodyDecoding(t *testing.T) {
	m := triage.Message{
		Queue:      "orders.dlq",
		Headers:    triage.Headers{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		Body:       []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\xaa\xae\x05\x04\x00\x00\xff\xff\x43\xbf\xa6\xa3\x02\x00\x00\x00"),
		Properties: triage.Properties{ContentType: "application/json", ContentEncoding: "gzip"},
	}
	ts := triage.Analyze(triage.Batch{Messages: []triage.Message{m}}, triage.Topology{}, redact.New())
	var b bytes.Buffer
	if err := writeMessageLines(&b, ts, redact.New(), discardMarks{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`, `"body_decoding":{"encoding":"gzip","encoded_bytes":26,"decoded_bytes":2}`, `"payload":"{}"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %s in\n%s", want, b.String())
		}
	}
}

// The trace id leaves through the redactor as every message string does: a
// configured rule that masks hex ids masks it in the JSON too.
func TestMessageLinesRedactTheTraceID(t *testing.T) {
	red := redact.New().With(nil, []redact.ValueRule{{Kind: "trace", Pattern: regexp.MustCompile(`4bf92f35[0-9a-f]+`)}})
	m := triage.Message{Queue: "q", Headers: triage.Headers{"X-B3-TraceId": "4bf92f3577b34da6a3ce929d0e0e4736"}}
	ts := triage.Analyze(triage.Batch{Messages: []triage.Message{m}}, triage.Topology{}, red)
	var b bytes.Buffer
	if err := writeMessageLines(&b, ts, red, discardMarks{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "4bf92f35") || !strings.Contains(b.String(), `"trace_id":"[REDACTED:trace]"`) {
		t.Errorf("trace id not masked:\n%s", b.String())
	}
}
