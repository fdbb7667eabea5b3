package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// Read-only mode, set by the flag, the environment or the config file,
// refuses discard and replay with one line before anything is opened: the
// queue keeps every message and no journal is created. Reading still works.
func TestReadOnlyRefusesDiscardAndReplayBeforeTouchingAnything(t *testing.T) {
	cfg, scen := scenarioVhost(t)
	var queue, group string
	for _, p := range scen.Parking {
		if p.DeliveryLimit == 0 && len(p.Groups()) > 0 {
			g := p.Groups()[0]
			queue, group = p.Queue, string(g.Reason)+"/"+g.ReasonCode
			break
		}
	}
	depth := readyDepth(t, cfg, queue)
	modes := map[string]func(env []string) ([]string, []string){
		"--read-only": func(env []string) ([]string, []string) { return env, []string{"--read-only"} },
		"DLQT_READ_ONLY": func(env []string) ([]string, []string) {
			return append(env, "DLQT_READ_ONLY=true"), nil
		},
		"read_only in": func(env []string) ([]string, []string) {
			return append(env, "DLQT_CONFIG="+writeConfig(t, "read_only: true\n")), nil
		},
	}
	for source, mode := range modes {
		t.Run(source, func(t *testing.T) {
			jpath := filepath.Join(t.TempDir(), "journal.db")
			env, flags := mode(append(brokerEnv(t, cfg), "DLQT_JOURNAL="+jpath))
			for _, args := range [][]string{
				{"discard", queue, "--group", group, "--reason", "cleanup", "--yes"},
				{"discard", queue, "--group", group, "--reason", "cleanup"}, // even the plan
				{"replay", queue, "--group", group, "--yes"},
				{"replay", "--resume", "r-1"},
			} {
				r := runDlqt(t, env, append(flags, args...)...)
				if r.code != 2 || r.stdout != "" {
					t.Errorf("%v: exit %d, stdout %q: want exit 2 and nothing on stdout", args, r.code, r.stdout)
				}
				assertOneLine(t, r.stderr, args[0]+" refused", "read-only", source, "nothing was touched")
			}
			if _, err := os.Stat(jpath); !os.IsNotExist(err) {
				t.Errorf("a refused command created the journal: %v", err)
			}
			if got := readyDepth(t, cfg, queue); got != depth {
				t.Errorf("%s: %d ready messages after the refusals, want %d", queue, got, depth)
			}
			if r := runDlqt(t, env, append(flags, "groups", queue, "--json")...); r.code != 0 {
				t.Errorf("read-only must still read: exit %d: %s", r.code, r.stderr)
			}
		})
	}
	t.Run("the flag overrides the config", func(t *testing.T) {
		env := append(brokerEnv(t, cfg), "DLQT_CONFIG="+writeConfig(t, "read_only: true\n"))
		r := runDlqt(t, env, "--read-only=false", "discard", queue, "--group", group, "--reason", "cleanup")
		if r.code != 0 {
			t.Errorf("--read-only=false: exit %d: %s", r.code, r.stderr)
		}
	})
	t.Run("a bad DLQT_READ_ONLY is a usage error", func(t *testing.T) {
		r := runDlqt(t, append(brokerEnv(t, cfg), "DLQT_READ_ONLY=maybe"), "groups", queue)
		if r.code != 2 {
			t.Errorf("exit %d", r.code)
		}
		assertOneLine(t, r.stderr, `DLQT_READ_ONLY="maybe"`)
	})
}
