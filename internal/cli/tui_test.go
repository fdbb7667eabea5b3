package cli

import "testing"

func TestTUIMemoryLimitFollowsTheBudgets(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ index, budget, want int64 }{
		{0, 0, 128*mib + 64*mib + 32*mib}, // the defaults: 224 MiB
		{32 * mib, 32 * mib, 32*mib + 32*mib + 32*mib},
		{1 << 30, 0, 1<<30 + 64*mib + 32*mib},
	} {
		if got := tuiMemoryLimit(c.index, c.budget); got != c.want {
			t.Errorf("tuiMemoryLimit(%d MiB, %d MiB) = %d MiB, want %d MiB", c.index/mib, c.budget/mib, got/mib, c.want/mib)
		}
	}
}
