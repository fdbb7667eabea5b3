package views

import (
	"slices"
	"strings"
)

// sparkBlocks are the eight heights of a sparkline cell. bubbles v2 has no
// sparkline and the replay gauge needs one line of 60 cells, so dlqt draws
// its own rather than take a charting library for it.
var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws the last width values as block characters scaled to the
// largest; a zero is a space, so an idle second reads as a gap, not as a
// low rate.
func Sparkline(values []float64, width int) string {
	if width <= 0 {
		return ""
	}
	if len(values) > width {
		values = values[len(values)-width:]
	}
	peak := 0.0
	if len(values) > 0 {
		peak = slices.Max(values)
	}
	var b strings.Builder
	for _, v := range values {
		if v <= 0 || peak <= 0 {
			b.WriteRune(' ')
			continue
		}
		i := int(v / peak * float64(len(sparkBlocks)))
		i = min(max(i, 1), len(sparkBlocks)) - 1
		b.WriteRune(sparkBlocks[i])
	}
	return b.String()
}
