package views

import "testing"

func TestSparklineScalesToThePeakAndShowsIdleAsAGap(t *testing.T) {
	cases := []struct {
		values []float64
		width  int
		want   string
	}{
		{[]float64{0, 1, 2, 4, 8}, 10, " ▁▂▄█"},
		{[]float64{5, 5, 5}, 10, "███"},
		{[]float64{0, 0}, 10, "  "},
		{[]float64{1, 2, 3, 4}, 2, "▆█"}, // the last width values
		{nil, 10, ""},
	}
	for _, c := range cases {
		if got := Sparkline(c.values, c.width); got != c.want {
			t.Errorf("Sparkline(%v, %d) = %q, want %q", c.values, c.width, got, c.want)
		}
	}
}
