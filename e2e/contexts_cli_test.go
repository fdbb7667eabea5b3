package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/cli"
)

// Named contexts in the config file: --context (or DLQT_CONTEXT, or
// current_context) picks the broker, `dlqt contexts` lists them, every
// journal entry names the context, and an unknown one is a usage error.
func TestContextsPickTheBrokerAndNameThemselvesInTheJournal(t *testing.T) {
	cfg, _ := scenarioVhost(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "config.yaml")
	text := "current_context: nowhere\ncontexts:\n" +
		"  nowhere: {amqp_url: \"amqp://guest:guest@127.0.0.1:1/\", mgmt_url: \"http://127.0.0.1:1\"}\n" +
		"  prod-eu: {amqp_url: \"" + cfg.AMQPURL + "\", mgmt_url: \"" + cfg.MgmtURL + "\", vhost: \"" + cfg.Vhost + "\", read_only: true}\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	jpath := filepath.Join(dir, "journal.db")
	env := append(isolatedEnv(t), "DLQT_CONFIG="+conf, "DLQT_JOURNAL="+jpath)

	rows := decodeJSON[[]cli.QueueRow](t, runDlqt(t, env, "--context", "prod-eu", "queues", "--json"))
	if len(rows) == 0 || rows[0].Vhost != cfg.Vhost {
		t.Errorf("--context prod-eu read %+v, want the queues of %s", rows, cfg.Vhost)
	}
	if r := runDlqt(t, append(env, "DLQT_CONTEXT=prod-eu"), "queues"); r.code != 0 {
		t.Errorf("DLQT_CONTEXT=prod-eu: exit %d: %s", r.code, r.stderr)
	}
	if r := runDlqt(t, env, "queues"); r.code != 1 || !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Errorf("current_context nowhere: exit %d: %s", r.code, r.stderr)
	}
	r := runDlqt(t, env, "--context", "prod-eu", "discard", "q", "--group", "expired", "--reason", "x", "--yes")
	if r.code != 2 || !strings.Contains(r.stderr, "context prod-eu") {
		t.Errorf("a read-only context: exit %d: %s", r.code, r.stderr)
	}

	r = runDlqt(t, env, "--context", "prod-eu", "contexts")
	if r.code != 0 || !strings.Contains(r.stdout, "*  prod-eu") || !strings.Contains(r.stdout, "nowhere") || strings.Contains(r.stdout, "guest:guest") {
		t.Errorf("contexts: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = runDlqt(t, env, "--context", "staging", "queues")
	if r.code != 2 {
		t.Errorf("unknown context: exit %d", r.code)
	}
	assertOneLine(t, r.stderr, `context "staging"`, "nowhere, prod-eu")

	if r := runDlqt(t, env, "--context", "prod-eu", "journal", "export", "--out", filepath.Join(dir, "x.jsonl")); r.code != 0 {
		t.Fatalf("export: %s", r.stderr)
	}
	es := journalEntries(t, jpath)
	if len(es) != 1 || es[0].Context != "prod-eu" || es[0].Version == "" {
		t.Errorf("journal = %+v; want the export entry naming context prod-eu and the build", es)
	}
}
