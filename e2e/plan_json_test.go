package e2e

import (
	"path/filepath"
	"testing"

	"github.com/dlqt/dlqt/internal/cli"
	"github.com/dlqt/dlqt/internal/triage"
)

// discard and replay print their plan as JSON for a script to check before
// it passes --yes; the plan names exactly what --yes would act on.
func TestDiscardAndReplayPlansAsJSON(t *testing.T) {
	env := isolatedEnv(t)
	d := decodeJSON[cli.DiscardPlanJSON](t, runDlqt(t, env, "--demo", "discard", "billing.parking", "--group", "expired", "--reason", "old promos", "--json"))
	groups := decodeJSON[[]cli.GroupRow](t, runDlqt(t, env, "--demo", "groups", "billing.parking", "--json"))
	want := 0
	for _, g := range groups {
		if g.Reason == "expired" {
			want += g.Count
		}
	}
	if d.Action != "discard" || d.Queue != "billing.parking" || d.Selection != "group expired" || d.Reason != "old promos" ||
		want == 0 || d.Count != want || len(d.IDs) != want || d.Missing == nil || d.Problems == nil {
		t.Errorf("discard plan = %+v; want the %d expired messages", d, want)
	}
	if r := runDlqt(t, env, "--demo", "discard", "billing.parking", "--group", "expired", "--reason", "x", "--json", "--yes"); r.code != 2 {
		t.Errorf("--json --yes: exit %d, want 2 (the plan only): %s", r.code, r.stderr)
	}

	cfg, scen := scenarioVhost(t)
	benv := append(brokerEnv(t, cfg), "DLQT_JOURNAL="+filepath.Join(t.TempDir(), "journal.db"))
	for _, p := range scen.Parking {
		if p.Type != triage.QueueClassic || len(p.Messages) == 0 || p.Messages[0].MessageID == "" {
			continue
		}
		id := p.Messages[0].MessageID
		r := runDlqt(t, benv, "replay", p.Queue, "--id", id, "--id", "no-such-id", "--json")
		plan := decodeJSON[cli.ReplayPlanJSON](t, result{stdout: r.stdout})
		if plan.Action != "replay" || plan.Vhost != cfg.Vhost || plan.Queue != p.Queue || plan.Count != 1 || plan.IDs[0] != id ||
			len(plan.Missing) != 1 || plan.Missing[0] != "no-such-id" || plan.ReplayID == "" || plan.Options.Canary == 0 {
			t.Errorf("replay plan = %+v", plan)
		}
		if (len(plan.Problems) == 0) != (r.code == 0) {
			t.Errorf("exit %d with problems %v: the exit status is the plan's", r.code, plan.Problems)
		}
		if depth := readyDepth(t, cfg, p.Queue); depth != len(p.Messages) {
			t.Errorf("%s holds %d messages after a plan, want %d: a plan changes nothing", p.Queue, depth, len(p.Messages))
		}
		return
	}
	t.Fatal("no classic parking queue in the scenarios")
}
