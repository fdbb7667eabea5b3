package triage

// Redactor masks secrets in payloads and header values.
type Redactor struct{}

// NewRedactor returns the default redactor.
func NewRedactor() *Redactor { return &Redactor{} }

// Payload is a body made safe to show.
type Payload struct {
	Text       string // redacted, sanitised; a hex dump when Binary
	Binary     bool
	Redactions int
}

// RenderPayload turns a body into text fit for a terminal or a JSON line.
func RenderPayload(body []byte, contentType string, r *Redactor) Payload {
	panic("not implemented")
}

// RedactHeaders returns a copy of h with secrets masked and strings sanitised.
func RedactHeaders(h Headers, r *Redactor) (Headers, int) {
	panic("not implemented")
}
