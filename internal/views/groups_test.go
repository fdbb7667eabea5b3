package views

import (
	"strings"
	"testing"
)

// TestReadingSaysWhatItIsDoing: every stage of a browse names the queue and
// a number or an action, so the screen never shows a bare "reading 0".
func TestReadingSaysWhatItIsDoing(t *testing.T) {
	g := NewGroups(testContext())
	g.SetSize(80, 10)
	g.Open("legacy.events.failed")
	g.StartLoading()
	for _, c := range []struct {
		read, expect int
		want         string
	}{
		{0, 0, "reading legacy.events.failed: asking the broker…"},
		{5, 0, "reading legacy.events.failed: 5 messages so far…"},
		{0, 8, "reading legacy.events.failed: 0 / 8 messages…"},
		{1, 1, "reading legacy.events.failed: 1 / 1 message…"},
	} {
		g.SetProgress(c.read, c.expect)
		if got := g.View(); !strings.Contains(got, c.want) {
			t.Errorf("read %d of %d: screen lacks %q:\n%s", c.read, c.expect, c.want, got)
		}
	}
}
