package ui

import "testing"

// A read makes room for its entries once: the queue's depth, within
// --limit and what the budget takes at the first entry's cost; with no
// depth known it starts at one and grows.
func TestKeptCapIsTheDepthWithinLimitAndBudget(t *testing.T) {
	for _, c := range []struct {
		name                  string
		expected, limit, want int
		budget, cost          int64
	}{
		{"the depth", 100000, 0, 100000, 128 << 20, 900},
		{"the limit", 100000, 5000, 5000, 128 << 20, 900},
		{"the budget", 1000000, 0, 149131, 128 << 20, 900},
		{"no depth known", 0, 0, 1, 128 << 20, 900},
		{"no cost yet", 42, 0, 42, 128 << 20, 0},
	} {
		if got := keptCap(c.expected, c.limit, c.budget, c.cost); got != c.want {
			t.Errorf("%s: keptCap(%d, %d, %d, %d) = %d, want %d", c.name, c.expected, c.limit, c.budget, c.cost, got, c.want)
		}
	}
}
