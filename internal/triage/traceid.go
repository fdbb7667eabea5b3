package triage

import (
	"fmt"
	"net/url"
	"strings"
)

// TraceIDOf is the distributed trace a message belongs to, and where it
// was found: the W3C traceparent header, B3 (the single b3 header, then
// X-B3-TraceId), Jaeger's uber-trace-id, then the envelope's traceparent
// or trace_id. Headers come first: the tracing library of the transport
// writes them, the envelope is the application's. Only a valid id counts
// (16 or 32 hex digits, not all zero), returned lower-case: it is the only
// message text a trace link is built from.
func TraceIDOf(h Headers, env Envelope) (id, source string) {
	if id := traceparentID(headerString(h, "traceparent")); id != "" {
		return id, "traceparent"
	}
	if b3 := headerString(h, "b3"); b3 != "" {
		first, _, _ := strings.Cut(b3, "-")
		if id := traceID(first); id != "" {
			return id, "b3"
		}
	}
	if id := traceID(headerString(h, "X-B3-TraceId")); id != "" {
		return id, "X-B3-TraceId"
	}
	if id := uberTraceID(headerString(h, "uber-trace-id")); id != "" {
		return id, "uber-trace-id"
	}
	if id := traceparentID(env.TraceParent); id != "" {
		return id, "envelope traceparent"
	}
	if id := traceID(env.TraceID); id != "" {
		return id, "envelope trace_id"
	}
	return "", ""
}

// traceparentID reads version-traceid-parentid-flags (W3C Trace Context):
// version ff is invalid; a later version may add fields after the four.
func traceparentID(s string) string {
	version, rest, _ := strings.Cut(strings.TrimSpace(s), "-")
	id, rest, _ := strings.Cut(rest, "-")
	parent, rest, _ := strings.Cut(rest, "-")
	flags, _, extra := strings.Cut(rest, "-")
	if len(version) != 2 || !isHex(version) || strings.EqualFold(version, "ff") || len(id) != 32 || parent == "" || flags == "" {
		return "" // (also every message with no traceparent: no allocation on that path)
	}
	if version == "00" && extra {
		return "" // version 00 has exactly four fields
	}
	return traceID(id)
}

// uberTraceID reads Jaeger's trace-id:span-id:parent-span-id:flags, whose
// trace id may have lost its leading zeros, and whose colons arrive
// URL-encoded from some HTTP hops.
func uberTraceID(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(s), "%3A", ":"), "%3a", ":")
	first, _, ok := strings.Cut(s, ":")
	if !ok || len(first) == 0 || len(first) > 32 || !isHex(first) {
		return ""
	}
	width := 16
	if len(first) > 16 {
		width = 32
	}
	return traceID(strings.Repeat("0", width-len(first)) + first)
}

// traceID is s as a trace id: 16 or 32 hex digits, not all zero,
// lower-cased; "" otherwise.
func traceID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if !validTraceID(s) {
		return ""
	}
	return s
}

func validTraceID(s string) bool {
	return (len(s) == 16 || len(s) == 32) && isHex(s) && strings.Trim(s, "0") != "" && s == strings.ToLower(s)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// traceIDPlaceholder is where a trace_url template takes the id.
const traceIDPlaceholder = "{trace_id}"

// TraceURL is the config's trace_url: a link to the tracing UI with
// {trace_id} in it, e.g. https://tempo.example/trace/{trace_id}.
type TraceURL struct{ template string }

// ParseTraceURL checks a trace_url: an absolute http(s) URL with a
// {trace_id} placeholder and no control characters or spaces, so that the
// link (and the OSC 8 sequence built around it) is only ever the config's
// text and a hex id. "" is no link.
func ParseTraceURL(s string) (TraceURL, error) {
	if s == "" {
		return TraceURL{}, nil
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return TraceURL{}, fmt.Errorf("trace_url %q: has a space or a control character", s)
		}
	}
	if !strings.Contains(s, traceIDPlaceholder) {
		return TraceURL{}, fmt.Errorf("trace_url %q: has no %s to put the trace id in", s, traceIDPlaceholder)
	}
	u, err := url.Parse(strings.ReplaceAll(s, traceIDPlaceholder, "0"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return TraceURL{}, fmt.Errorf("trace_url %q: not an http or https URL (write it like https://tempo.example/trace/%s)", s, traceIDPlaceholder)
	}
	return TraceURL{template: s}, nil
}

// IsZero reports no trace_url.
func (t TraceURL) IsZero() bool { return t.template == "" }

// Link is the trace's URL, when there is a template and id is a valid
// trace id (TraceIDOf's).
func (t TraceURL) Link(id string) (string, bool) {
	if t.template == "" || !validTraceID(id) {
		return "", false
	}
	return strings.ReplaceAll(t.template, traceIDPlaceholder, id), true
}

// String is the template as configured.
func (t TraceURL) String() string { return t.template }
