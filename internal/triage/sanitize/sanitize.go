// Package sanitize makes broker text safe for a terminal and tells text from
// binary bodies. It is a leaf: redaction, analysis and every screen use it.
package sanitize

import (
	"strings"
	"unicode/utf8"
)

// Broker text (payloads, headers, queue names) is attacker-controlled, so
// nothing in it may drive the terminal. Every escape sequence starts with ESC
// or a C1 control, so escaping those (and the other controls) one by one
// leaves any sequence as inert text. A removed control is shown in an escaped
// form such as \x1b, \r or \u202e: a responder should see that someone
// injected it, not get a silently cleaned string. The escaped form is for
// people, not for round-tripping: a body that already held the four
// characters \x1b reads the same.

// tabWidth is the tab stop used when expanding tabs into spaces.
const tabWidth = 8

// Text makes multi-line broker text safe for a terminal: newlines stay,
// tabs become spaces up to the next tab stop, CRLF becomes a newline, and
// every other control, bidi control, line/paragraph separator or invalid
// UTF-8 byte is replaced by its escaped text form.
func Text(s string) string { return sanitize(s, true) }

// Line is Text for one-line fields (names, header values): a newline is
// escaped too, so the field cannot break the layout.
func Line(s string) string { return sanitize(s, false) }

func sanitize(s string, keepNewline bool) string {
	i := firstUnsafe(s, keepNewline)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	col := utf8.RuneCountInString(s[strings.LastIndexByte(s[:i], '\n')+1 : i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '\n' && keepNewline:
				b.WriteByte('\n')
				col = 0
			case c == '\r' && keepNewline && i < len(s) && s[i] == '\n':
				// CRLF is a line ending, not an overwrite: let the '\n' through.
			case c == '\t':
				n := tabWidth - col%tabWidth
				b.WriteString(strings.Repeat(" ", n))
				col += n
			case c < 0x20 || c == 0x7f:
				col += writeEscapedByte(&b, c)
			default:
				b.WriteByte(c)
				col++
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			col += writeEscapedByte(&b, c)
		case UnsafeRune(r):
			col += writeEscapedRune(&b, r)
		default:
			b.WriteString(s[i : i+size])
			col++
		}
		i += size
	}
	return b.String()
}

// firstUnsafe returns the index of the first byte that sanitize must change,
// or -1. Clean ASCII, the common case, costs one pass over the bytes.
func firstUnsafe(s string, keepNewline bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c == '\n' && keepNewline {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			return i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || UnsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// UnsafeRune reports a non-ASCII rune that must not reach a terminal: C1
// controls (0x9b alone is a CSI), bidi controls that reorder what is shown
// (Trojan Source), and the Unicode line and paragraph separators. Encoders
// that must leave text Text would not change (JSON output) escape these.
func UnsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

// writeEscapedByte writes a control or invalid byte as \r, \n or \xNN and
// returns the width written.
func writeEscapedByte(b *strings.Builder, c byte) int {
	switch c {
	case '\n':
		b.WriteString(`\n`)
		return 2
	case '\r':
		b.WriteString(`\r`)
		return 2
	}
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
	return 4
}

// writeEscapedRune writes a rune as \uNNNN (all unsafe runes are in the BMP).
func writeEscapedRune(b *strings.Builder, r rune) int {
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(r>>shift)&0xf])
	}
	return 6
}

// Lines is Line of each string, for lists of broker names.
func Lines(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Line(s)
	}
	return out
}
