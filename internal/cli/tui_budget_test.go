package cli

import (
	"testing"

	"github.com/spf13/cobra"
)

// The TUI's index keeps to --memory-budget when it is given; unset, it
// takes the TUI's own default (0 to ui), larger than a headless read's.
func TestTUIIndexBudgetFollowsTheFlagOnlyWhenGiven(t *testing.T) {
	isolate(t)
	for _, c := range []struct {
		args []string
		want int64
	}{
		{nil, 0},
		{[]string{"--memory-budget", "32MiB"}, 32 << 20},
		{[]string{"--memory-budget", "64MiB"}, 64 << 20}, // the headless default, given: kept to
	} {
		a := &app{}
		cmd := &cobra.Command{Use: "dlqt", RunE: func(*cobra.Command, []string) error { return nil }}
		a.bindFlags(cmd)
		if err := cmd.ParseFlags(append([]string{"--demo"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		if err := a.resolve(cmd); err != nil {
			t.Fatal(err)
		}
		if got := a.indexBudget(); got != c.want {
			t.Errorf("%v: index budget %d, want %d", c.args, got, c.want)
		}
	}
}
