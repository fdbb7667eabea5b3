package replay

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// A message larger than the memory budget: refused up front, naming what
// it takes, when the user set the budget; a warning with the same figure
// under the default budget, which nobody chose.
func TestPlanSaysWhatAMessageOverTheMemoryBudgetTakes(t *testing.T) {
	in := triage.Inspection{Messages: []triage.Triaged{
		{ID: "m-1", PayloadBytes: 128 << 20},
		{ID: "m-2", PayloadBytes: 1 << 10},
	}}
	plan := func() Plan { return Plan{Items: ItemsOf(Item{ID: "m-1"}, Item{ID: "m-2"})} }

	p := plan()
	if n := p.LargestBody(in); n != 128<<20 {
		t.Fatalf("largest body %d", n)
	}
	p.CheckMemory(in, 64<<20, true)
	want := "m-1 is 128.0 MiB, larger than --memory-budget 64.0 MiB: a message is replayed in one piece, so replaying it takes its size and about 64.0 MiB more of dlqt's memory (192.0 MiB for the largest); nothing is replayed: pass --memory-budget 128MiB or more"
	if len(p.Problems) != 1 || !strings.HasPrefix(p.Problems[0], want) || len(p.Warnings) != 0 {
		t.Fatalf("set budget: problems %q, warnings %q; want the problem %q", p.Problems, p.Warnings, want)
	}
	if err := p.Runnable(); err == nil {
		t.Fatal("a plan with a message over the budget the user set runs")
	}

	p = plan()
	p.CheckMemory(in, 0, false)
	want = "m-1 is 128.0 MiB, larger than the default memory budget 64.0 MiB: a message is replayed in one piece, so replaying it takes its size and about 64.0 MiB more of dlqt's memory (192.0 MiB for the largest); set --memory-budget"
	if len(p.Warnings) != 1 || !strings.HasPrefix(p.Warnings[0], want) || len(p.Problems) != 0 {
		t.Fatalf("default budget: problems %q, warnings %q; want the warning %q", p.Problems, p.Warnings, want)
	}

	p = plan()
	p.CheckMemory(in, 128<<20, true)
	if len(p.Problems)+len(p.Warnings) != 0 {
		t.Fatalf("within the budget: problems %q, warnings %q", p.Problems, p.Warnings)
	}
}
