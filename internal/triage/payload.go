package triage

import (
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"
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
}

// RenderPayload turns a body into text fit for a terminal or a JSON line.
// Text that parses as JSON is pretty-printed (2-space indent, the sender's key
// order and number text) with secrets masked; other text gets free-text
// redaction; both are then sanitised. Anything else is a bounded hex dump.
// A nil r redacts nothing (the output is still sanitised).
func RenderPayload(body []byte, contentType string, r *Redactor) Payload {
	if len(body) == 0 {
		return Payload{}
	}
	if isBinary(body, contentType) {
		shown := body[:min(len(body), maxDumpBytes)]
		hidden, n := r.hiddenBytes(body[:min(len(body), maxDumpBytes+1024)])
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
		out, c, unread, err := redactJSON(body, r, maxTextBytes)
		if err == nil {
			text, n, rest, parsed = out, c, unread, true
		}
	}
	if !parsed {
		shown := body
		if len(body) > maxTextBytes {
			shown = trimPartialRune(body[:maxTextBytes])
			rest = len(body) - len(shown)
		}
		text, n = r.Text(string(shown))
	}
	text = Sanitize(text)
	if rest > 0 {
		text += fmt.Sprintf("\n... %d more bytes not shown", rest)
	}
	return Payload{Text: text, Redactions: n}
}

// isBinary decides between text and a hex dump: invalid UTF-8, more than a
// few control bytes, or a content type that names a binary format. ESC is not
// counted: coloured log lines are text, and their escapes are shown escaped.
func isBinary(body []byte, contentType string) bool {
	if binaryContentType(contentType) {
		return true
	}
	sample := body
	if len(sample) > maxTextBytes {
		sample = trimPartialRune(sample[:maxTextBytes])
	}
	if !utf8.Valid(sample) {
		return true
	}
	controls := 0
	for _, c := range sample {
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b) || c == 0x7f {
			controls++
		}
	}
	return controls > 1+len(sample)/100
}

// binaryContentType reports content types whose bodies are binary even when
// they happen to be valid UTF-8. application/octet-stream is not one of them:
// publishers use it for JSON often enough that the bytes decide.
func binaryContentType(ct string) bool {
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(ct))
	}
	switch {
	case strings.HasPrefix(mt, "image/"), strings.HasPrefix(mt, "audio/"), strings.HasPrefix(mt, "video/"):
		return true
	}
	for _, f := range []string{"protobuf", "avro", "msgpack", "cbor", "thrift", "zip", "gzip", "pdf"} {
		if strings.Contains(mt, f) {
			return true
		}
	}
	return false
}

// trimPartialRune drops an incomplete UTF-8 sequence cut off at the end.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}
