package cli

import (
	"cmp"
	"os"
	"runtime/debug"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// replayMemoryLimit is the soft memory limit of a headless replay whose
// reads may let the broker push budget bytes ahead (0: the default) and
// whose largest message is largest bytes: twice the budget for what is in
// flight and what decoding it leaves (as tuiMemoryLimit), or, when larger,
// the largest message, which is held whole, and replay.MemoryOverhead for
// the rest. Without it the collector lets the heap grow to twice what is
// live: a replay of one 128 MiB message peaked at 355 MB of RSS; with it,
// at about 200 MB. The collector works harder near the limit, never past
// half the CPU.
func replayMemoryLimit(budget, largest int64) int64 {
	return max(2*cmp.Or(budget, triage.DefaultMemoryBudget), largest) + replay.MemoryOverhead
}

// replayMemory is the soft memory limit a headless replay sets on the
// process, restored when the replay ends; unset under dlqt serve (one
// process runs many sessions) and when the environment sets GOMEMLIMIT.
type replayMemory struct {
	budget int64
	prev   int64
	set    bool
}

func (a *app) limitReplayMemory() *replayMemory {
	m := &replayMemory{budget: int64(a.memBudget)}
	if a.session != nil || os.Getenv("GOMEMLIMIT") != "" {
		return m
	}
	m.prev, m.set = debug.SetMemoryLimit(replayMemoryLimit(m.budget, 0)), true
	return m
}

// fit makes room for the largest message the plan replays.
func (m *replayMemory) fit(largest int64) {
	if m.set {
		debug.SetMemoryLimit(replayMemoryLimit(m.budget, largest))
	}
}

func (m *replayMemory) restore() {
	if m.set {
		debug.SetMemoryLimit(m.prev)
	}
}
