package cli

import (
	"testing"
	"time"
)

func TestParseSince(t *testing.T) {
	good := map[string]time.Duration{"90m": 90 * time.Minute, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour}
	for in, want := range good {
		if got, err := parseSince(in); err != nil || got != want {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0s", "-1h", "d", "1.5d", "week"} {
		if _, err := parseSince(in); err == nil || err.Error() != `--since "`+in+`": want a positive duration such as 90m, 24h or 7d` {
			t.Errorf("parseSince(%q): err = %v", in, err)
		}
	}
}

func TestWrapIndentedBreaksBetweenWords(t *testing.T) {
	got := wrapIndented("one two three four five", "  ", 13)
	want := "  one two\n  three four\n  five\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := wrapIndented("a-very-long-word x", "  ", 8); got != "  a-very-long-word\n  x\n" {
		t.Errorf("a long word gets its own line: %q", got)
	}
	// Width is terminal cells: each of these CJK words is 4 cells, 2 runes, 6 bytes.
	if got := wrapIndented("注文 注文 注文", "  ", 12); got != "  注文 注文\n  注文\n" {
		t.Errorf("wide words: %q", got)
	}
	if got := wrapIndented("   ", "  ", 10); got != "" {
		t.Errorf("no words: %q", got)
	}
}
