package triage

import (
	"strings"

	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// redactLookahead is how far past what is shown a string is redacted: a
// secret that starts on screen and is cut at its edge would no longer pass
// its check (a card's Luhn, a JWT's dots) and its first part would show. A
// PEM block is masked to the end of what is scanned, so it needs no more.
// Beyond it a megabyte stack trace is not scanned for 240 shown bytes.
const redactLookahead = 16 << 10

// ShownLine is the one way a short broker string (a name, a reason code, an
// event type, a field of the failure block, a timeline detail) reaches a
// screen, JSON or the journal: redacted with red, then sanitised to one
// line and trimmed. It returns the text and how many values it masked; a
// nil red masks nothing.
func ShownLine(red *redact.Redactor, s string) (string, int) {
	text, n := red.Text(s)
	return strings.TrimSpace(sanitize.Line(text)), n
}

// ShownClipped is ShownLine clipped to max bytes, after redaction: what
// is redacted reaches redactLookahead past max, so no secret cut at the
// edge shows its start.
func ShownClipped(red *redact.Redactor, s string, max int) (string, int) {
	text, n := ShownLine(red, clipText(s, max+redactLookahead))
	return clipText(text, max), n
}
