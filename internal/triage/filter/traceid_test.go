package filter

import (
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// trace_id= finds the messages of one trace, whichever header carried it
// and in whichever case (ids are kept lower-case, as W3C writes them).
func TestFilterByTraceID(t *testing.T) {
	ms := []triage.Message{
		{Queue: "q", Headers: triage.Headers{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},
		{Queue: "q", Headers: triage.Headers{"X-B3-TraceId": "4BF92F3577B34DA6A3CE929D0E0E4736"}, Properties: triage.Properties{MessageID: "b3"}},
		{Queue: "q", Headers: triage.Headers{"uber-trace-id": "a3ce929d0e0e4736:1:0:1"}, Properties: triage.Properties{MessageID: "jaeger"}},
		{Queue: "q", Properties: triage.Properties{MessageID: "none"}},
	}
	ts := triage.Analyze(triage.Batch{Messages: ms}, triage.Topology{}, nil)
	for where, want := range map[string]int{
		"trace_id=4bf92f3577b34da6a3ce929d0e0e4736": 2,
		"trace_id~a3ce929d":                         3,
		"trace_id!=":                                3,
		"trace_id=":                                 1,
	} {
		f, err := ParseWhere([]string{where}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if got := len(f.Apply(ts)); got != want {
			t.Errorf("%s matched %d, want %d", where, got, want)
		}
	}
}
