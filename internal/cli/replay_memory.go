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
// flight and what decoding it leaves, or, when larger,
// the largest message, which is held whole, and replay.MemoryOverhead for
// the rest. Without it the collector lets the heap grow to twice what is
// live: a replay of one 128 MiB message peaked at 355 MB of RSS; with it,
// at about 200 MB. The collector works harder near the limit, never past
// half the CPU.
func replayMemoryLimit(budget, largest int64) int64 {
	return max(2*cmp.Or(budget, triage.DefaultMemoryBudget), largest) + replay.MemoryOverhead
}

// discardMemoryLimit is the soft memory limit of a headless discard: a
// replay's without a large message (twice the budget for what its hold
// lets the broker push ahead and what decoding it leaves,
// replay.MemoryOverhead for what it keeps of every message: its id and
// place, the journal's list of the selected). Without it a discard of
// 1,000,000 × 1 KiB peaked at 332 MB of RSS with 158 MiB of heap in use;
// with 192 MiB, at 220 MB.
func discardMemoryLimit(budget, _ int64) int64 { return replayMemoryLimit(budget, 0) }

// actionMemory is the soft memory limit a headless replay or discard sets
// on the process, restored when it ends; unset under dlqt serve (one
// process runs many sessions) and when the environment sets GOMEMLIMIT.
type actionMemory struct {
	budget int64
	limit  func(budget, largest int64) int64
	prev   int64
	set    bool
}

func (a *app) limitReplayMemory() *actionMemory { return a.limitMemory(replayMemoryLimit) }

func (a *app) limitDiscardMemory() *actionMemory { return a.limitMemory(discardMemoryLimit) }

func (a *app) limitMemory(limit func(budget, largest int64) int64) *actionMemory {
	m := &actionMemory{budget: int64(a.memBudget), limit: limit}
	if a.session != nil || os.Getenv("GOMEMLIMIT") != "" {
		return m
	}
	m.prev, m.set = debug.SetMemoryLimit(limit(m.budget, 0)), true
	return m
}

// fit makes room for the largest message the plan replays.
func (m *actionMemory) fit(largest int64) {
	if m.set {
		debug.SetMemoryLimit(m.limit(m.budget, largest))
	}
}

func (m *actionMemory) restore() {
	if m.set {
		debug.SetMemoryLimit(m.prev)
	}
}
