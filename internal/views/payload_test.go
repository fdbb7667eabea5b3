package views

import (
	"strings"
	"testing"
)

// TestALongWordWrapsWithoutStrayLines: a payload of one long run of
// characters (a 1 MiB blob) fills every line; no line holds the two cells
// a second wrap at a narrower width used to leave.
func TestALongWordWrapsWithoutStrayLines(t *testing.T) {
	p := &page{width: 40}
	p.text(`{"blob":"` + strings.Repeat("x", 2000) + `"}`)
	for i, l := range p.lines[:len(p.lines)-1] {
		if n := len(strings.TrimSpace(l)); n < 30 {
			t.Fatalf("line %d of %d holds only %d cells: %q", i, len(p.lines), n, l)
		}
	}
}
