package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A cluster is given as comma-separated node lists, from the flags, the
// environment or the config file, with the usual precedence; with nothing
// answering, the error names every node of the list that won.
func TestNodeListsFromFlagEnvAndConfigFile(t *testing.T) {
	list := func() (mgmt string, nodes []string) {
		a, b := closedPort(t), closedPort(t)
		return "http://guest:guest@" + a + ",http://" + b, []string{a, b}
	}
	fileMgmt, fileNodes := list()
	envMgmt, envNodes := list()
	flagMgmt, flagNodes := list()
	amqp := "amqp://guest:guest@" + closedPort(t) + "/,amqp://" + closedPort(t) + "/"

	for _, tc := range []struct {
		name  string
		env   string
		flags []string
		want  []string
	}{
		{"config file", "", nil, fileNodes},
		{"environment over config file", envMgmt, nil, envNodes},
		{"flag over environment", envMgmt, []string{"--mgmt-url", flagMgmt}, flagNodes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := isolate(t)
			cfg := filepath.Join(home, "dlqt.yaml")
			if err := os.WriteFile(cfg, []byte("amqp_url: \""+amqp+"\"\nmgmt_url: \""+fileMgmt+"\"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("DLQT_CONFIG", cfg)
			t.Setenv("DLQT_MGMT_URL", tc.env)
			_, stderr, code := run(t, Assets{}, append(tc.flags, "queues")...)
			want := "management API: no node answered: " + tc.want[0] + " (connection refused), " + tc.want[1] + " (connection refused)"
			if code != exitFailure || !strings.Contains(stderr, want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitFailure, want)
			}
			if strings.Contains(stderr, "guest:guest") {
				t.Errorf("stderr shows a password: %q", stderr)
			}
		})
	}
}
