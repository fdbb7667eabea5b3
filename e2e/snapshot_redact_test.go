package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/cli"
	"github.com/dlqt/dlqt/internal/triage"
)

// A snapshot for a teammate is redacted by default and still reads; --raw
// needs consent, says so and is journalled with the file's hash.
func TestSnapshotsAreRedactedUnlessRawWhichIsJournalled(t *testing.T) {
	const secret = "hunter2-dlqt-scenario-password"
	env, jpath := seededJournal(t, 0)
	dir := t.TempDir()
	queue := "legacy.events.failed"

	red := filepath.Join(dir, "teammate.json")
	r := runDlqt(t, env, "--demo", "snapshot", queue, "--out", red)
	if r.code != 0 || !strings.Contains(r.stderr, "redacted") {
		t.Fatalf("snapshot: exit %d: %s", r.code, r.stderr)
	}
	if bodies := snapshotBodies(t, red); !strings.Contains(bodies, "password=") || strings.Contains(bodies, secret) {
		t.Errorf("the default snapshot carries the raw password, or lost the body:\n%s", bodies)
	}
	live := decodeLines[cli.MessageRow](t, runDlqt(t, env, "--demo", "messages", queue, "--json"))
	off := decodeLines[cli.MessageRow](t, runDlqt(t, env, "--snapshot", red, "messages", queue, "--json"))
	if len(off) == 0 || len(off) != len(live) {
		t.Errorf("the redacted snapshot reads %d messages, the source %d", len(off), len(live))
	}

	raw := filepath.Join(dir, "raw.json")
	r = runDlqt(t, env, "--demo", "snapshot", queue, "--out", raw, "--raw")
	if _, err := os.Stat(raw); r.code != 2 || err == nil {
		t.Errorf("--raw without a terminal or --yes: exit %d, file %v; want exit 2 and no file", r.code, err)
	}
	assertOneLine(t, r.stderr, "--raw", "--yes")

	r = runDlqt(t, env, "--demo", "snapshot", queue, "--out", raw, "--raw", "--yes")
	if r.code != 0 || !strings.Contains(r.stderr, "RAW") || !strings.Contains(r.stderr, "unredacted") {
		t.Fatalf("--raw --yes: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(snapshotBodies(t, raw), secret) {
		t.Fatalf("the raw snapshot lacks the body as it was")
	}
	data, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	es := journalEntries(t, jpath)
	if len(es) != 1 {
		t.Fatalf("journal: %d entries, want the raw snapshot's one", len(es))
	}
	e := es[0]
	qs, _ := e.Details["queues"].([]any)
	if e.Action != triage.ActionSnapshotRaw || e.Actor != "auditor" || len(qs) != 1 || qs[0] != queue ||
		e.Details["sha256"] != hex.EncodeToString(sum[:]) || e.Details["file"] != raw {
		t.Errorf("journal entry = %+v", e)
	}
}

// snapshotBodies is every message body of a snapshot file, one per line.
func snapshotBodies(t *testing.T, path string) string {
	t.Helper()
	s, err := broker.OpenSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, batch := range all.Batches {
		for _, m := range batch.Messages {
			b.Write(m.Body)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
