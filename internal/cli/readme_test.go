package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeCommandListNamesEveryCommand: the command list under "Using it"
// in the README names every command `dlqt --help` lists, so a responder who
// reads only that list still finds serve, quarantine and the approvals.
func TestReadmeCommandListNamesEveryCommand(t *testing.T) {
	isolate(t)
	help, _, code := run(t, Assets{}, "--help")
	if code != 0 {
		t.Fatalf("dlqt --help exit %d", code)
	}
	_, commands, ok := strings.Cut(help, "Available Commands:\n")
	if !ok {
		t.Fatalf("no command list in dlqt --help:\n%s", help)
	}
	commands, _, _ = strings.Cut(commands, "\n\n")
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, usage, _ := strings.Cut(string(readme), "## Using it\n")
	usage, _, _ = strings.Cut(usage, "\n```\n")
	var names []string
	for _, line := range strings.Split(commands, "\n") {
		name := strings.Fields(line)[0]
		if name == "help" || name == "completion" {
			continue // cobra's own
		}
		names = append(names, name)
		if !regexp.MustCompile(`(?m)^dlqt ` + name + `\b`).MatchString(usage) {
			t.Errorf("README's command list has no line for dlqt %s", name)
		}
	}
	if len(names) < 15 {
		t.Fatalf("read only %d commands from dlqt --help: %v", len(names), names)
	}
}

// TestSnapshotOutSaysItIsAlwaysGzip: a snapshot is gzip whatever the name
// (broker.CreateSnapshotFile), so --out must not promise plain JSON for a
// name without .gz, which `jq . x.json` then fails to read.
func TestSnapshotOutSaysItIsAlwaysGzip(t *testing.T) {
	isolate(t)
	help, _, code := run(t, Assets{}, "snapshot", "--help")
	if code != 0 {
		t.Fatalf("dlqt snapshot --help exit %d", code)
	}
	i := strings.Index(help, "--out string")
	if i < 0 {
		t.Fatalf("no --out in:\n%s", help)
	}
	out, _, _ := strings.Cut(help[i:], "\n")
	if strings.Contains(out, ".gz to compress") || !strings.Contains(out, "gzip-compressed whatever its name") {
		t.Errorf("--out help %q: a snapshot is always gzip", out)
	}
}

// TestDemoLoadRefusesAnotherVhost: demo load always recreates dlqt-demo, so
// an explicit --vhost (a responder keeping off a shared vhost) is refused
// with exit 2 before any broker is dialled, instead of silently ignored.
func TestDemoLoadRefusesAnotherVhost(t *testing.T) {
	isolate(t)
	_, stderr, code := run(t, Assets{}, "--amqp-url", "amqp://guest:guest@127.0.0.1:1/", "--mgmt-url", "http://127.0.0.1:1",
		"demo", "load", "--vhost", "mine")
	if code != exitUsage || !strings.Contains(stderr, "always (re)creates vhost dlqt-demo, never --vhost mine") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming both vhosts", code, stderr)
	}
}

// TestFullScanOfASnapshotIsRefusedAtOnce: without --yes, fullscan on the
// demo listed what it would move and said "--yes runs it", which then
// failed; it is refused first, exit 2, nothing else said.
func TestFullScanOfASnapshotIsRefusedAtOnce(t *testing.T) {
	isolate(t)
	snap, err := os.ReadFile(filepath.Join("..", "..", "testdata", "demo.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--demo", "fullscan", "orders.dlq.q"}, {"--demo", "fullscan", "orders.dlq.q", "--yes"}} {
		stdout, stderr, code := run(t, Assets{DemoSnapshot: snap}, args...)
		if code != exitUsage || stdout != "" || strings.Contains(stderr, "--yes runs it") ||
			!strings.Contains(stderr, "fullscan moves messages on the broker") {
			t.Errorf("dlqt %v: exit %d, stdout %q, stderr %q; want exit 2 and only the refusal", args, code, stdout, stderr)
		}
	}
}
