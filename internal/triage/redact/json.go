package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// errOutputFull stops a JSON walk whose output reached its bound.
var errOutputFull = errors.New("output bound reached")

// maxIndentDepth caps indentation so a deeply nested body cannot grow the
// output quadratically; deeper levels share the last indent.
const maxIndentDepth = 32

// jsonPrinter re-emits one JSON document pretty-printed with a token-level
// walk, so key order, duplicate keys and number text stay as the sender wrote
// them, while secrets are masked by key and by shape. It walks the bytes
// itself: the document was checked with json.Valid first, and
// json.Decoder.Token costs more than all the redaction rules together.
type jsonPrinter struct {
	data  []byte
	pos   int
	out   bytes.Buffer
	red   *Redactor
	limit int // stop once out is longer; <= 0 means no bound
	n     int // redactions
	// at is where the walk is (keys and indexes), kept only when the
	// redactor has path rules, which are matched against it.
	at    []pathStep
	paths bool
	// under is the normalised key the value being printed sits under (an
	// array's elements share their array's key), for the rules that need one.
	under string
}

// JSON pretty-prints a JSON document with secrets masked (a nil r masks
// nothing). When the output would pass limit bytes it stops there and
// reports how many input bytes it did not reach. A document that is not
// valid JSON is an error, for the caller to redact as free text instead.
func (r *Redactor) JSON(data []byte, limit int) (out string, redactions, unread int, err error) {
	if !json.Valid(data) {
		return "", 0, 0, errors.New("invalid JSON")
	}
	p := &jsonPrinter{data: data, red: r, limit: limit, paths: r != nil && len(r.paths) > 0}
	p.out.Grow(len(data) + len(data)/2)
	err = p.value(0)
	if errors.Is(err, errOutputFull) {
		return p.out.String(), p.n, len(data) - p.pos, nil
	}
	if err != nil {
		return "", 0, 0, err
	}
	return p.out.String(), p.n, 0, nil
}

func (p *jsonPrinter) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// next skips white space and returns the next byte (0 at the end).
func (p *jsonPrinter) next() byte {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return 0
	}
	return p.data[p.pos]
}

func (p *jsonPrinter) value(depth int) error {
	if p.limit > 0 && p.out.Len() > p.limit {
		return errOutputFull
	}
	switch c := p.next(); c {
	case '{':
		return p.object(depth)
	case '[':
		return p.array(depth)
	case '"':
		s, n := p.red.value(p.under, decodeJSONString(p.stringToken()))
		p.n += n
		writeJSONString(&p.out, s)
	case 't', 'f', 'n':
		start := p.pos
		for p.pos < len(p.data) && p.data[p.pos] >= 'a' && p.data[p.pos] <= 'z' {
			p.pos++
		}
		p.out.Write(p.data[start:p.pos])
	case 0:
		return errors.New("unexpected end of JSON")
	default:
		start := p.pos
		for p.pos < len(p.data) && strings.IndexByte("+-.0123456789eE", p.data[p.pos]) >= 0 {
			p.pos++
		}
		num := string(p.data[start:p.pos])
		// A card number sent as a JSON number is masked like one in a string,
		// and so is a phone number or an SSN under its key; the mask is a
		// string, so the output stays valid JSON.
		if p.red != nil && isDigits(num) && (len(num) >= 13 || p.red.underAny(p.under)) {
			if s, n := p.red.value(p.under, num); n > 0 {
				p.n += n
				writeJSONString(&p.out, s)
				return nil
			}
		}
		p.out.WriteString(num)
	}
	return nil
}

func (p *jsonPrinter) object(depth int) error {
	p.pos++ // '{'
	p.out.WriteByte('{')
	empty := true
	for p.next() != '}' {
		if !empty {
			p.pos++ // ','
			p.next()
		}
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return errors.New("expected an object key")
		}
		key := decodeJSONString(p.stringToken())
		shownKey, n := p.red.Text(key) // a secret used as a key (an e-mail) is masked too
		p.n += n
		if p.next() != ':' {
			return errors.New("expected ':'")
		}
		p.pos++
		if !empty {
			p.out.WriteByte(',')
		}
		empty = false
		p.newline(depth + 1)
		writeJSONString(&p.out, shownKey)
		p.out.WriteString(": ")
		p.under = p.normalKey(key)
		if rule, ok := p.red.normalKeyRule(p.under); ok {
			p.masked(rule.Mask)
			continue
		}
		if err := p.member(pathStep{kind: stepKey, key: key}, depth+1); err != nil {
			return err
		}
	}
	p.pos++ // '}'
	if !empty {
		p.newline(depth)
	}
	p.out.WriteByte('}')
	return nil
}

// normalKey normalises a member's key when a rule may need it.
func (p *jsonPrinter) normalKey(key string) string {
	if p.red == nil || (len(p.red.keys) == 0 && !p.red.keyed) {
		return ""
	}
	return normalizeKey(key)
}

func (p *jsonPrinter) array(depth int) error {
	p.pos++ // '['
	p.out.WriteByte('[')
	empty := true
	under := p.under
	for i := 0; p.next() != ']'; i++ {
		p.under = under
		if !empty {
			p.pos++ // ','
			p.out.WriteByte(',')
		}
		empty = false
		p.newline(depth + 1)
		if err := p.member(pathStep{kind: stepIndex, index: i}, depth+1); err != nil {
			return err
		}
	}
	p.pos++ // ']'
	if !empty {
		p.newline(depth)
	}
	p.out.WriteByte(']')
	return nil
}

// member prints one object member's value or array element, masked whole
// when a path rule names where it sits.
func (p *jsonPrinter) member(step pathStep, depth int) error {
	if !p.paths {
		return p.value(depth)
	}
	p.at = append(p.at, step)
	defer func() { p.at = p.at[:len(p.at)-1] }()
	if rule, ok := p.red.pathRule(p.at); ok {
		p.masked(rule.Mask)
		return nil
	}
	return p.value(depth)
}

// stringToken returns the raw string token at pos, quotes included.
func (p *jsonPrinter) stringToken() []byte {
	start := p.pos
	p.pos++
	for p.pos < len(p.data) && p.data[p.pos] != '"' {
		if p.data[p.pos] == '\\' {
			p.pos++
		}
		p.pos++
	}
	p.pos++
	return p.data[start:min(p.pos, len(p.data))]
}

// skipValue moves past one value and returns its raw bytes.
func (p *jsonPrinter) skipValue() []byte {
	p.next()
	start := p.pos
	nest := 0
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; c {
		case '"':
			p.stringToken()
			if nest == 0 {
				return p.data[start:p.pos]
			}
			continue
		case '{', '[':
			nest++
		case '}', ']':
			if nest == 0 {
				return p.data[start:p.pos]
			}
			nest--
			if nest == 0 {
				p.pos++
				return p.data[start:p.pos]
			}
		case ',':
			if nest == 0 {
				return p.data[start:p.pos]
			}
		case ' ', '\t', '\n', '\r':
			if nest == 0 {
				return p.data[start:p.pos]
			}
		}
		p.pos++
	}
	return p.data[start:p.pos]
}

// decodeJSONString turns a raw JSON string token into its text.
func decodeJSONString(raw []byte) string {
	if len(raw) < 2 {
		return ""
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(inner)
	}
	return s
}

// masked replaces the value of a secret key, scalar or subtree, with one
// mask. null, booleans and "" stay: they reveal nothing and say whether the
// credential was there at all.
func (p *jsonPrinter) masked(m Mask) {
	raw := p.skipValue()
	switch string(raw) {
	case "null", "true", "false", `""`:
		p.out.Write(raw)
		return
	}
	secret := string(raw)
	if len(raw) > 0 && raw[0] == '"' {
		secret = decodeJSONString(raw)
	}
	p.n++
	writeJSONString(&p.out, maskKeyed(secret, m))
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
// so the result is valid JSON that sanitize.Text leaves alone, and shows any of
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
		if sanitize.UnsafeRune(r) {
			b.WriteString(s[start:i])
			writeJSONEscape(b, r)
			start = i + size
		}
		i += size
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

const hexDigits = "0123456789abcdef"

func writeJSONEscape(b *bytes.Buffer, r rune) {
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(r>>shift)&0xf])
	}
}
