package sanitize

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage/sanitize/sanitizetest"
)

func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"clean ascii is returned as is", "order 42 failed: timeout", "order 42 failed: timeout"},
		{"newlines stay", "line one\nline two\n", "line one\nline two\n"},
		{"vietnamese, CJK and emoji stay", "Đơn hàng thất bại 注文 🚀👍🏽", "Đơn hàng thất bại 注文 🚀👍🏽"},
		{"tab expands to the next tab stop", "a\tb\nabcdefgh\tc", "a       b\nabcdefgh        c"},
		{"OSC title change with BEL is made visible", "\x1b]0;pwned\x07ok", `\x1b]0;pwned\x07ok`},
		{"OSC with ST terminator", "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", `\x1b]8;;http://evil\x1b\link\x1b]8;;\x1b\`},
		{"CSI clear screen", "\x1b[2Jhi", `\x1b[2Jhi`},
		{"CSI colour", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"DCS, APC, PM, SOS", "\x1bPq\x1b\\\x1b_a\x1b\\\x1b^b\x1b\\\x1bXc\x1b\\", `\x1bPq\x1b\\x1b_a\x1b\\x1b^b\x1b\\x1bXc\x1b\`},
		{"lone ESC at the end", "abc\x1b", `abc\x1b`},
		{"8-bit CSI as a raw byte (invalid UTF-8)", "\x9b31mred", `\x9b31mred`},
		{"8-bit CSI as U+009B", "\u009b31mred", `\u009b31mred`},
		{"C1 NEL and OSC as runes", "a\u0085b\u009dc", `a\u0085b\u009dc`},
		{"carriage return overwrite", "amount: 100\ramount: 999", `amount: 100\ramount: 999`},
		{"CRLF is a line ending", "a\r\nb", "a\nb"},
		{"bidi override (Trojan Source)", "user\u202eexe.txt", `user\u202eexe.txt`},
		{"bidi isolates and marks", "\u2066a\u2069\u200e\u200f\u061c", `\u2066a\u2069\u200e\u200f\u061c`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"NUL, BEL, backspace, DEL", "a\x00b\x07c\x08d\x7f", `a\x00b\x07c\x08d\x7f`},
		{"invalid UTF-8", "ok\xff\xfe!", `ok\xff\xfe!`},
		{"truncated multi-byte sequence", "caf\xc3", `caf\xc3`},
		{"valid U+FFFD stays", "a\uFFFDb", "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Text(tt.in)
			if got != tt.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			sanitizetest.AssertSafe(t, got, true)
		})
	}
}

func TestSanitizeLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"clean", "orders.dlq", "orders.dlq"},
		{"newline is escaped", "a\nb", `a\nb`},
		{"CRLF is escaped too", "a\r\nb", `a\r\nb`},
		{"tab expands", "a\tb", "a       b"},
		{"escape in a queue name", "q\x1b[2J", `q\x1b[2J`},
		{"bidi in a header", "\u202egnp.exe", `\u202egnp.exe`},
		{"unicode stays", "hàng đợi 🐇", "hàng đợi 🐇"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Line(tt.in)
			if got != tt.want {
				t.Errorf("Line(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			sanitizetest.AssertSafe(t, got, false)
		})
	}
}

var sanitizeSeeds = []string{
	"", "plain", "a\nb", "\x1b]0;pwned\x07", "\x1b[2J", "\x9b31m", "\u009b31m",
	"\u202eabc", "a\rb", "a\r\nb", "\t\t", "\xff", "\xc3", "Đơn 注文 🚀", "\u2028\u2029",
	"\x00\x7f", "\x1bP\x1b\\", strings.Repeat("\x1b", 10),
}

func FuzzSanitize(f *testing.F) {
	for _, s := range sanitizeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Text(s)
		sanitizetest.AssertSafe(t, got, true)
		if Text(got) != got {
			t.Fatalf("Sanitize is not idempotent on %q", s)
		}
	})
}

func FuzzSanitizeLine(f *testing.F) {
	for _, s := range sanitizeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Line(s)
		sanitizetest.AssertSafe(t, got, false)
		if strings.Contains(got, "\n") {
			t.Fatalf("newline in Line(%q)", s)
		}
	})
}

func BenchmarkSanitize(b *testing.B) {
	cases := map[string]string{
		"clean-ascii": strings.Repeat("order 42 failed: upstream timeout after 30s; ", 24),
		"unicode":     strings.Repeat("Đơn hàng thất bại 注文 🚀 ", 32),
		"hostile":     strings.Repeat("ok \x1b[2J\u202e\r ", 64),
	}
	for name, s := range cases {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				Text(s)
			}
		})
	}
}
