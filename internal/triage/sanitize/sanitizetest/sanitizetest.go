// Package sanitizetest holds the check every test of text bound for a
// terminal shares.
package sanitizetest

import (
	"testing"
	"unicode/utf8"
)

// AssertSafe fails when s holds anything that could drive a terminal:
// C0/C1 controls, DEL, bidi controls, line separators or invalid UTF-8
// (newlines only when newlineAllowed). It lists them itself rather than
// asking package sanitize, so it checks that package instead of echoing it.
func AssertSafe(t testing.TB, s string, newlineAllowed bool) {
	t.Helper()
	if msg := Unsafe(s, newlineAllowed); msg != "" {
		t.Fatalf("unsafe output %q: %s", s, msg)
	}
}

// Unsafe names the first thing in s that could drive a terminal, or "".
func Unsafe(s string, newlineAllowed bool) string {
	if !utf8.ValidString(s) {
		return "invalid UTF-8"
	}
	for _, r := range s {
		switch {
		case r == '\n' && newlineAllowed:
		case r < 0x20:
			return "C0 control"
		case r == 0x7f:
			return "DEL"
		case r >= 0x80 && r <= 0x9f:
			return "C1 control"
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
			r == 0x200e, r == 0x200f, r == 0x061c:
			return "bidi control"
		case r == 0x2028 || r == 0x2029:
			return "line/paragraph separator"
		}
	}
	return ""
}
