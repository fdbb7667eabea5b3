package replay

import (
	"fmt"
	"strings"

	"github.com/dlqt/dlqt/internal/triage"
)

// MemoryOverhead is what a replay takes in dlqt's memory beside its
// largest message: the program, the plan, the frames in flight. With the
// soft memory limit the headless replay sets (cli replayMemoryLimit) a
// replay of one 128 MiB message peaked at 203 MB of RSS; without one the
// collector lets the heap grow to twice what is live and more (355 MB;
// BenchmarkReplayLarge: 2.9 times the body).
const MemoryOverhead = 64 << 20

// memoryListed is how many oversized messages a plan names one by one.
const memoryListed = 5

// LargestBody is the size of the largest of the plan's messages as read.
func (p *Plan) LargestBody(in triage.Inspection) int64 {
	var largest int64
	p.eachSize(in, func(_ Item, n int64) { largest = max(largest, n) })
	return largest
}

// eachSize calls each with every item and the size of its message as
// read in. A plan made from in (NewPlan) knows where each item's message
// is; otherwise each is looked up by id.
func (p *Plan) eachSize(in triage.Inspection, each func(it Item, size int64)) {
	sizeOf := func(t triage.Triaged) int64 { return int64(max(t.PayloadBytes, len(t.Message.Body))) }
	k := 0 // the items passed to each
	for ; len(p.at) == p.Items.Len() && k < len(p.at) && int(p.at[k]) < in.Len(); k++ {
		t := in.At(int(p.at[k]))
		if t.ID != p.Items.ID(k) {
			break // not the inspection the plan was made from
		}
		each(p.Items.At(k), sizeOf(t))
	}
	if k == p.Items.Len() {
		return
	}
	size := make(map[string]int64, in.Len())
	for i := range in.Len() {
		t := in.At(i)
		size[t.ID] = sizeOf(t)
	}
	for ; k < p.Items.Len(); k++ {
		it := p.Items.At(k)
		each(it, size[it.ID])
	}
}

// CheckMemory holds the plan's messages against budget (bytes; <= 0:
// triage.DefaultMemoryBudget). A message is received, held and published
// in one piece, so a message larger than the budget cannot be replayed
// within it: the plan says so before anything is held, and what it
// takes. When the user set the budget (set), that is a problem: the plan
// may not run, nothing is changed, and the problem names the budget that
// would let it. Nobody chose the default budget: then it is a warning,
// and the replay goes on.
func (p *Plan) CheckMemory(in triage.Inspection, budget int64, set bool) {
	if budget <= 0 {
		budget = triage.DefaultMemoryBudget
	}
	var over []string
	var largest int64
	p.eachSize(in, func(it Item, n int64) {
		if n <= budget {
			return
		}
		largest = max(largest, n)
		if len(over) < memoryListed {
			over = append(over, fmt.Sprintf("%s is %s", it.ID, triage.SizeText(n)))
		} else if len(over) == memoryListed {
			over = append(over, "…")
		}
	})
	if len(over) == 0 {
		return
	}
	what := fmt.Sprintf("%s, larger than %%s: a message is replayed in one piece, so replaying it takes its size and about %s more of dlqt's memory (%s for the largest)",
		strings.Join(over, ", "), triage.SizeText(MemoryOverhead), triage.SizeText(largest+MemoryOverhead))
	if !set {
		p.Warnings = append(p.Warnings, fmt.Sprintf(what, "the default memory budget "+triage.SizeText(budget))+"; set --memory-budget to refuse such a message instead")
		return
	}
	p.Problems = append(p.Problems, fmt.Sprintf(what, "--memory-budget "+triage.SizeText(budget))+
		fmt.Sprintf("; nothing is replayed: pass --memory-budget %dMiB or more, or leave the larger messages out of the selection", (largest+(1<<20)-1)>>20))
}
