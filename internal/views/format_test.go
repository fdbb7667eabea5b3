package views

import (
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
	if got := fit("orders.dead-letter.queue", 10); got != "orders.de…" {
		t.Errorf("fit = %q", got)
	}
	if got := fit("ab", 4); got != "ab  " {
		t.Errorf("fit = %q", got)
	}
	if got := fitRight("7", 3); got != "  7" {
		t.Errorf("fitRight = %q", got)
	}
	if got := fit("日本語テキスト", 7); ansi.StringWidth(got) != 7 {
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
