package views

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// wide is text of two-cell runes: a byte or rune count gets its width
// wrong by a factor of three or two.
const wide = "注文番号は無効です 日本語のテキストがここに続きます 終わり"

// TestWideRunesAreMeasuredInCells: wrapping, cutting and padding count
// display cells, so a line of wide runes never spills past the screen and
// a column of them still lines up.
func TestWideRunesAreMeasuredInCells(t *testing.T) {
	for _, w := range []int{6, 11, 20} {
		lines := wrapWords(wide, w)
		if len(lines) < 2 {
			t.Fatalf("wrapWords(%d) did not wrap: %q", w, lines)
		}
		for _, l := range lines {
			if n := ansi.StringWidth(l); n > w {
				t.Errorf("wrapWords(%d): line %q is %d cells", w, l, n)
			}
		}
		if got := strings.Join(strings.Fields(strings.Join(lines, "")), ""); got != strings.Join(strings.Fields(wide), "") {
			t.Errorf("wrapWords(%d) lost text: %q", w, got)
		}
	}
	for _, l := range strings.Split(fitLines(wide+"\n"+wide, 15, 3), "\n") {
		if n := ansi.StringWidth(l); n > 15 {
			t.Errorf("fitLines: %q is %d cells", l, n)
		}
	}
	if got := fitRight("日本", 6); got != "  日本" {
		t.Errorf("fitRight of wide runes = %q", got)
	}

	tb := newTable(testContext(), []Column{{Title: "queue", Width: 10, Flex: 1}, {Title: "n", Width: 3, Right: true}})
	tb.SetSize(30, 4)
	tb.SetRows([][]string{{wide, "7"}, {"ascii", "12"}})
	for i, l := range strings.Split(ansi.Strip(tb.View()), "\n")[:3] {
		if n := ansi.StringWidth(l); n != 30 {
			t.Errorf("table line %d is %d cells, want 30: %q", i, n, l)
		}
	}

	p := &page{st: NewStyles(true, false), width: 40}
	p.field("reason", wide)
	p.text(wide)
	for _, l := range p.lines {
		if n := ansi.StringWidth(ansi.Strip(l)); n > 40 {
			t.Errorf("message page line %q is %d cells", l, n)
		}
	}
}
