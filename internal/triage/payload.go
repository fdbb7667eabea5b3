package triage

import (
	"fmt"

	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Bounds on what one payload renders to: a screen or a JSON line has no use
// for megabytes, and a hostile body must not cost unbounded time.
const (
	maxTextBytes = 256 << 10 // text payloads, after pretty-printing
	maxDumpBytes = 4 << 10   // binary payloads, before the hex dump
)

// Payload is a body made safe to show.
type Payload struct {
	Text       string // redacted, sanitised; a hex dump when Binary
	Binary     bool
	Redactions int
	// Decoding is how a compressed body was read (RenderMessage); nil
	// when it was shown as it is.
	Decoding *BodyDecoding
}

// RenderPayload turns a body into text fit for a terminal or a JSON line.
// Text that parses as JSON is pretty-printed (2-space indent, the sender's key
// order and number text) with secrets masked; other text gets free-text
// redaction; both are then sanitised. Anything else is a bounded hex dump.
// A nil r redacts nothing (the output is still sanitised).
func RenderPayload(body []byte, contentType string, r *redact.Redactor) Payload {
	if len(body) == 0 {
		return Payload{}
	}
	if sanitize.IsBinary(body, contentType) {
		shown := body[:min(len(body), maxDumpBytes)]
		hidden, n := r.HiddenBytes(body[:min(len(body), maxDumpBytes+1024)])
		text := hexDump(shown, hidden)
		if rest := len(body) - len(shown); rest > 0 {
			text += fmt.Sprintf("\n... %d more bytes", rest)
		}
		return Payload{Text: text, Binary: true, Redactions: n}
	}

	var text string
	n, rest := 0, 0
	parsed := false
	if len(body) <= maxTextBytes {
		out, c, unread, err := r.JSON(body, maxTextBytes)
		if err == nil {
			text, n, rest, parsed = out, c, unread, true
		}
	}
	if !parsed {
		shown := body
		if len(body) > maxTextBytes {
			shown = sanitize.TrimPartialRune(body[:maxTextBytes])
			rest = len(body) - len(shown)
		}
		text, n = r.Text(string(shown))
	}
	text = sanitize.Text(text)
	if rest > 0 {
		text += fmt.Sprintf("\n... %d more bytes not shown", rest)
	}
	return Payload{Text: text, Redactions: n}
}
