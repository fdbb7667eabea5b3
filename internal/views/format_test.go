package views

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 37: "37", 999: "999", 1000: "1,000", 48210: "48,210", 1234567: "1,234,567", -4200: "-4,200"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second:             "45s",
		12 * time.Minute:             "12m",
		3*time.Hour + 12*time.Minute: "3h12m",
		5 * time.Hour:                "5h",
		50 * time.Hour:               "2d2h",
		48 * time.Hour:               "2d",
		-time.Minute:                 "0s",
	} {
		if got := Age(d); got != want {
			t.Errorf("Age(%v) = %q, want %q", d, got, want)
		}
	}
	if got := ageSince(time.Now(), time.Time{}); got != "?" {
		t.Errorf("unknown age = %q, want ?", got)
	}
}

func TestFitTruncatesWithEllipsisAndPads(t *testing.T) {
	if got := Fit("orders.dead-letter.queue", 10); got != "orders.de…" {
		t.Errorf("fit = %q", got)
	}
	if got := Fit("ab", 4); got != "ab  " {
		t.Errorf("fit = %q", got)
	}
	if got := fitRight("7", 3); got != "  7" {
		t.Errorf("fitRight = %q", got)
	}
	if got := Fit("日本語テキスト", 7); ansi.StringWidth(got) != 7 {
		t.Errorf("fit of wide runes = %q, %d cells", got, ansi.StringWidth(got))
	}
}

func TestPluralAgreesWithTheCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 events"}, {1, "1 event"}, {2, "2 events"}, {1204, "1,204 events"}} {
		if got := Plural(c.n, "event"); got != c.want {
			t.Errorf("Plural(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestWrapNeverSplitsAMask: at every width a mask that fits a line is on
// one line, and no line is wider than asked.
func TestWrapNeverSplitsAMask(t *testing.T) {
	s := `"card": "[REDACTED:card ...1111]", "key": "[REDACTED:private-key sha256:1a2b3c4d]" and more words here`
	for w := 40; w <= 80; w++ {
		lines := wrapWords(s, w)
		joined := strings.Join(lines, "\n")
		for _, m := range []string{"[REDACTED:card ...1111]", "[REDACTED:private-key sha256:1a2b3c4d]"} {
			if !strings.Contains(joined, m) {
				t.Errorf("width %d split %q:\n%s", w, m, joined)
			}
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > w {
				t.Errorf("width %d: line %q is %d cells", w, l, ansi.StringWidth(l))
			}
		}
	}
}

// TestPayloadKeepsJSONIndentation: a long JSON value wraps under its own
// key, not at the left margin.
func TestPayloadKeepsJSONIndentation(t *testing.T) {
	p := &page{width: 40}
	p.text("{\n    \"url\": \"https://psp.example/v2/captures/with/a/long/path and words\"\n}")
	if len(p.lines) < 4 {
		t.Fatalf("no wrap: %q", p.lines)
	}
	for _, l := range p.lines[2 : len(p.lines)-1] {
		if !strings.HasPrefix(l, "        ") {
			t.Errorf("continuation %q lost the JSON indentation (lines %q)", l, p.lines)
		}
	}
}

// TestHexDumpKeepsItsTextColumnAt80: a hex dump line (78 cells) stays one
// line at 80 columns, its text column beside its bytes.
func TestHexDumpKeepsItsTextColumnAt80(t *testing.T) {
	line := "00000000  50 4b 03 04 14 00 00 00  08 00 ff fe 00 9b 1b 5b  |PK.............[|"
	dump := line + "\n00000010  32 4a                                             |2J|"
	for _, w := range []int{80, 120} {
		p := &page{width: w}
		p.text(dump)
		if len(p.lines) != 2 || !strings.HasSuffix(p.lines[0], "|PK.............[|") {
			t.Errorf("width %d: dump became %q", w, p.lines)
		}
		for _, l := range p.lines {
			if ansi.StringWidth(l) > w {
				t.Errorf("width %d: %q is wider", w, l)
			}
		}
	}
}

// TestSplitCommandsInsideParenthesesKeepsOneParenthesis: a command inside
// parentheses became "(the command below))".
func TestSplitCommandsInsideParenthesesKeepsOneParenthesis(t *testing.T) {
	cases := []struct{ fix, prose, cmd string }{
		{"Find the consumer (management UI, queue q, Consumers; or rabbitmqctl list_consumers -p v) and stop it.",
			"Find the consumer (management UI, queue q, Consumers; or the command below) and stop it.",
			"rabbitmqctl list_consumers -p v"},
		{"Set it by policy, e.g. rabbitmqctl set_policy -p v NAME '^q$' '{}' --apply-to queues. Then redeclare.",
			"Set it by policy, e.g. (the command below). Then redeclare.",
			"rabbitmqctl set_policy -p v NAME '^q$' '{}' --apply-to queues"},
	}
	for _, c := range cases {
		prose, cmds := SplitCommands(c.fix)
		if prose != c.prose || len(cmds) != 1 || cmds[0] != c.cmd {
			t.Errorf("SplitCommands(%q)\n = %q, %q\nwant %q, %q", c.fix, prose, cmds, c.prose, c.cmd)
		}
	}
}
