package triage

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// errOutputFull stops a JSON walk whose output reached its bound.
var errOutputFull = errors.New("output bound reached")

// maxIndentDepth caps indentation so a deeply nested body cannot grow the
// output quadratically; deeper levels share the last indent.
const maxIndentDepth = 32

// jsonPrinter re-emits one JSON value pretty-printed with a token-level walk,
// so key order, duplicate keys and number text stay as the sender wrote them,
// while secrets are masked by key and by shape.
type jsonPrinter struct {
	dec   *json.Decoder
	out   bytes.Buffer
	red   *Redactor
	limit int // stop once out is longer; <= 0 means no bound
	n     int // redactions
}

// redactJSON pretty-prints a valid JSON document with secrets masked. When
// the output would pass limit bytes it stops there and reports how many input
// bytes it did not reach.
func redactJSON(data []byte, r *Redactor, limit int) (out string, redactions, unread int, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &jsonPrinter{dec: dec, red: r, limit: limit}
	p.out.Grow(len(data) + len(data)/2)
	err = p.value(0)
	if errors.Is(err, errOutputFull) {
		return p.out.String(), p.n, len(data) - int(dec.InputOffset()), nil
	}
	if err != nil {
		return "", 0, 0, err
	}
	return p.out.String(), p.n, 0, nil
}

func (p *jsonPrinter) value(depth int) error {
	tok, err := p.dec.Token()
	if err != nil {
		return err
	}
	return p.token(tok, depth)
}

func (p *jsonPrinter) token(tok json.Token, depth int) error {
	if p.limit > 0 && p.out.Len() > p.limit {
		return errOutputFull
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return p.object(depth)
		case '[':
			return p.array(depth)
		}
		return errors.New("unexpected " + t.String())
	case string:
		s, n := p.red.Text(t)
		p.n += n
		writeJSONString(&p.out, s)
	case json.Number:
		// A card number sent as a JSON number is masked like one in a string;
		// the mask is a string, so the output stays valid JSON.
		if p.red != nil && isDigits(string(t)) {
			if s, n := p.red.Text(string(t)); n > 0 {
				p.n += n
				writeJSONString(&p.out, s)
				return nil
			}
		}
		p.out.WriteString(string(t))
	case bool:
		if t {
			p.out.WriteString("true")
		} else {
			p.out.WriteString("false")
		}
	case nil:
		p.out.WriteString("null")
	}
	return nil
}

func (p *jsonPrinter) object(depth int) error {
	p.out.WriteByte('{')
	empty := true
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if !empty {
			p.out.WriteByte(',')
		}
		empty = false
		p.newline(depth + 1)
		writeJSONString(&p.out, key)
		p.out.WriteString(": ")
		if rule, ok := p.red.keyRule(key); ok {
			if err := p.masked(rule, depth+1); err != nil {
				return err
			}
			continue
		}
		if err := p.value(depth + 1); err != nil {
			return err
		}
	}
	if _, err := p.dec.Token(); err != nil { // '}'
		return err
	}
	if !empty {
		p.newline(depth)
	}
	p.out.WriteByte('}')
	return nil
}

func (p *jsonPrinter) array(depth int) error {
	p.out.WriteByte('[')
	empty := true
	for p.dec.More() {
		if !empty {
			p.out.WriteByte(',')
		}
		empty = false
		p.newline(depth + 1)
		if err := p.value(depth + 1); err != nil {
			return err
		}
	}
	if _, err := p.dec.Token(); err != nil { // ']'
		return err
	}
	if !empty {
		p.newline(depth)
	}
	p.out.WriteByte(']')
	return nil
}

// masked replaces the value of a secret key, scalar or subtree, with one
// mask. null, booleans and "" stay: they reveal nothing and say whether the
// credential was there at all.
func (p *jsonPrinter) masked(rule KeyRule, depth int) error {
	var raw json.RawMessage
	if err := p.dec.Decode(&raw); err != nil {
		return err
	}
	raw = bytes.TrimSpace(raw)
	switch string(raw) {
	case "null", "true", "false", `""`:
		p.out.Write(raw)
		return nil
	}
	secret := string(raw)
	if len(raw) > 0 && raw[0] == '"' {
		_ = json.Unmarshal(raw, &secret)
	}
	p.n++
	writeJSONString(&p.out, maskKeyed(secret, rule.Mask))
	return nil
}

func (p *jsonPrinter) newline(depth int) {
	p.out.WriteByte('\n')
	depth = min(depth, maxIndentDepth)
	for range depth {
		p.out.WriteString("  ")
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// writeJSONString writes s as a JSON string. Unlike encoding/json it also
// escapes DEL, C1 controls, bidi controls and the line separators as \uXXXX,
// so the result is valid JSON that Sanitize leaves alone, and shows any of
// them visibly. It does not escape <, > and & (this is not for HTML).
func writeJSONString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x7f {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b.WriteString(s[start:i])
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				writeJSONEscape(b, rune(c))
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
			i++
			start = i
			continue
		}
		if unsafeRune(r) {
			b.WriteString(s[start:i])
			writeJSONEscape(b, r)
			start = i + size
		}
		i += size
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

func writeJSONEscape(b *bytes.Buffer, r rune) {
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(r>>shift)&0xf])
	}
}
