package triage

import (
	"strings"
	"testing"
)

func TestTraceIDOf(t *testing.T) {
	const w3c = "4bf92f3577b34da6a3ce929d0e0e4736"
	tests := []struct {
		name       string
		h          Headers
		body       string
		id, source string
	}{
		{"none", Headers{"x-death": []any{}}, "", "", ""},
		{"W3C traceparent", Headers{"traceparent": "00-" + w3c + "-00f067aa0ba902b7-01"}, "", w3c, "traceparent"},
		{"traceparent upper case is read lower", Headers{"Traceparent": "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"}, "", w3c, "traceparent"},
		{"traceparent of a future version with more fields", Headers{"traceparent": "cc-" + w3c + "-00f067aa0ba902b7-01-what-the-future-holds"}, "", w3c, "traceparent"},
		{"traceparent version ff is invalid", Headers{"traceparent": "ff-" + w3c + "-00f067aa0ba902b7-01"}, "", "", ""},
		{"traceparent all-zero trace id is invalid", Headers{"traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}, "", "", ""},
		{"traceparent short id is invalid", Headers{"traceparent": "00-4bf92f35-00f067aa0ba902b7-01"}, "", "", ""},
		{"B3 single header, 128-bit", Headers{"b3": "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90"}, "", "80f198ee56343ba864fe8b2a57d3eff7", "b3"},
		{"B3 single header, 64-bit", Headers{"b3": "a3ce929d0e0e4736-00f067aa0ba902b7"}, "", "a3ce929d0e0e4736", "b3"},
		{"B3 sampling only has no trace id", Headers{"b3": "0"}, "", "", ""},
		{"X-B3-TraceId", Headers{"X-B3-TraceId": "463ac35c9f6413ad48485a3953bb6124"}, "", "463ac35c9f6413ad48485a3953bb6124", "X-B3-TraceId"},
		{"uber-trace-id", Headers{"uber-trace-id": "5b8aa5a2d2c872e8321cf37308d69df2:051581bf3cb55c13:0:1"}, "", "5b8aa5a2d2c872e8321cf37308d69df2", "uber-trace-id"},
		{"uber-trace-id short id padded, %3A separators", Headers{"uber-trace-id": "af3b2c%3A1%3A0%3A1"}, "", "0000000000af3b2c", "uber-trace-id"},
		{"traceparent wins over B3", Headers{"X-B3-TraceId": "463ac35c9f6413ad", "traceparent": "00-" + w3c + "-00f067aa0ba902b7-01"}, "", w3c, "traceparent"},
		{"a bad traceparent falls through to B3", Headers{"X-B3-TraceId": "463ac35c9f6413ad", "traceparent": "junk"}, "", "463ac35c9f6413ad", "X-B3-TraceId"},
		{"bytes header", Headers{"traceparent": []byte("00-" + w3c + "-00f067aa0ba902b7-01")}, "", w3c, "traceparent"},
		{"an escape sequence is not a trace id", Headers{"X-B3-TraceId": "\x1b]8;;http://evil\x07463ac35c9f6413ad"}, "", "", ""},
		{"envelope trace_id", nil, `{"trace_id":"` + strings.ToUpper(w3c) + `"}`, w3c, "envelope trace_id"},
		{"envelope traceparent", nil, `{"traceparent":"00-` + w3c + `-00f067aa0ba902b7-01"}`, w3c, "envelope traceparent"},
		{"envelope trace_id that is no hex", nil, `{"trace_id":"see logs"}`, "", ""},
		{"headers before the envelope", Headers{"X-B3-TraceId": "463ac35c9f6413ad"}, `{"trace_id":"` + w3c + `"}`, "463ac35c9f6413ad", "X-B3-TraceId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, source := TraceIDOf(tt.h, DecodeEnvelope([]byte(tt.body)))
			if id != tt.id || source != tt.source {
				t.Errorf("TraceIDOf = %q from %q, want %q from %q", id, source, tt.id, tt.source)
			}
		})
	}
}

func TestAnalyzeFindsTheTraceID(t *testing.T) {
	m := Message{Queue: "q", Headers: Headers{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, Body: []byte(`{}`)}
	got := Analyze(Batch{Messages: []Message{m}}, Topology{}, nil)[0]
	if got.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("trace_id = %q", got.TraceID)
	}
}

func TestTraceLink(t *testing.T) {
	tmpl, err := ParseTraceURL("https://tempo.example/trace/{trace_id}?orgId=1")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := tmpl.Link("4bf92f3577b34da6a3ce929d0e0e4736"); !ok || got != "https://tempo.example/trace/4bf92f3577b34da6a3ce929d0e0e4736?orgId=1" {
		t.Errorf("Link = %q, %v", got, ok)
	}
	for _, id := range []string{"", "not-hex", "4bf92f35\x1b]8;;x", "4bf92f3577b34da6a3ce929d0e0e47361"} {
		if got, ok := tmpl.Link(id); ok {
			t.Errorf("Link(%q) = %q, want none: only a validated hex id makes a link", id, got)
		}
	}
	if got, ok := (TraceURL{}).Link("4bf92f3577b34da6a3ce929d0e0e4736"); ok {
		t.Errorf("no template made %q", got)
	}
	for _, bad := range []string{
		"tempo.example/trace/{trace_id}",           // no scheme
		"javascript:alert(1)//{trace_id}",          // not http(s)
		"https://tempo.example/trace/",             // no placeholder
		"https://tempo.example/\x1b]8;;{trace_id}", // a control character would end the OSC 8 sequence
		"https://tempo.example/ {trace_id}",        // a space is no URL
	} {
		if _, err := ParseTraceURL(bad); err == nil {
			t.Errorf("ParseTraceURL(%q) accepted", bad)
		}
	}
	if tmpl, err := ParseTraceURL(""); err != nil || !tmpl.IsZero() {
		t.Errorf("empty trace_url = %v, %v; want none", tmpl, err)
	}
}

func FuzzTraceIDOf(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "a3ce929d0e0e4736-00f067aa0ba902b7", "5b8aa5a2d2c872e8:1:0:1")
	f.Add("", "1", "%3A%3A")
	f.Fuzz(func(t *testing.T, tp, b3, uber string) {
		id, _ := TraceIDOf(Headers{"traceparent": tp, "b3": b3, "uber-trace-id": uber}, Envelope{})
		if id == "" {
			return
		}
		if !validTraceID(id) {
			t.Fatalf("trace id %q is not 16 or 32 lower-case hex digits", id)
		}
	})
}
