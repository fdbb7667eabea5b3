package e2e

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// seededJournal writes n entries, one an hour apart ending now, and returns
// the environment of a dlqt using it.
func seededJournal(t *testing.T, n int) (env []string, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "journal.db")
	j, err := journal.Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := range n {
		_, err := j.Append(journal.Entry{
			Time: now.Add(time.Duration(i-n+1) * time.Hour), Actor: "ana@bastion", Host: "bastion",
			Action: triage.ActionDiscard, Vhost: "prod", Queue: "orders.parking",
			MessageIDs: []string{"m-" + itoa(i), "m;x"}, Reason: "entry " + itoa(i) + `, with "quotes"`,
			Details: map[string]any{"step": "outcome", "n": i},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	return append(isolatedEnv(t), "DLQT_JOURNAL="+path, "DLQT_ACTOR=auditor"), path
}

func TestJournalExportJSONLVerifiesAndAnEditFailsOnThatEntry(t *testing.T) {
	env, path := seededJournal(t, 5)
	out := filepath.Join(t.TempDir(), "export.jsonl")
	r := runDlqt(t, env, "journal", "export", "--out", out)
	if r.code != 0 || !strings.Contains(r.stderr, "exported 5 journal entries") {
		t.Fatalf("export: exit %d: %s", r.code, r.stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5", len(lines))
	}
	for i, l := range lines {
		var e journal.Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Seq != uint64(i+1) || len(e.Hash) != 64 {
			t.Fatalf("line %d: %v %+v", i+1, err, e)
		}
	}

	r = runDlqt(t, env, "journal", "verify", "--file", out)
	if r.code != 0 || !strings.Contains(r.stdout, "entries 1-5 verified") {
		t.Fatalf("untouched export: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}

	// The export left an entry of its own, and the database still verifies.
	r = runDlqt(t, env, "journal", "verify")
	if r.code != 0 || !strings.Contains(r.stdout, "entries 1-6 verified") {
		t.Fatalf("database: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	es := journalEntries(t, path)
	if x := es[5]; x.Action != triage.ActionExport || x.Actor != "auditor" || x.Details["count"] != float64(5) || x.Details["format"] != "jsonl" {
		t.Errorf("export entry = %+v", x)
	}

	// One changed reason on entry 3: verify names entry 3 and fails.
	tampered := strings.Replace(string(data), `entry 2, with`, `entry 2 (nothing to see), with`, 1)
	if tampered == string(data) {
		t.Fatal("the edit did not apply")
	}
	bad := filepath.Join(t.TempDir(), "tampered.jsonl")
	os.WriteFile(bad, []byte(tampered), 0o600)
	r = runDlqt(t, env, "journal", "verify", "--file", bad)
	if r.code != 1 {
		t.Fatalf("tampered export: exit %d, want 1: %s", r.code, r.stdout)
	}
	assertOneLine(t, r.stderr, "entry 3", "tampered.jsonl")
}

func TestJournalExportCSVAndSince(t *testing.T) {
	env, _ := seededJournal(t, 5)
	r := runDlqt(t, env, "journal", "export", "--format", "csv")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 || strings.Join(rows[0], ",") != "seq,time,actor,host,action,vhost,queue,message_ids,reason,details,prev_hash,hash" {
		t.Fatalf("rows %d, header %v", len(rows), rows[0])
	}
	if row := rows[3]; row[0] != "3" || row[2] != "ana@bastion" || row[7] != "m-2;m;x" || row[8] != `entry 2, with "quotes"` || row[9] != `{"n":2,"step":"outcome"}` {
		t.Errorf("row 3 = %q", row)
	}

	// The entries are an hour apart, the newest now: 150m keeps the last 3,
	// and the CSV export's own entry.
	r = runDlqt(t, env, "journal", "export", "--since", "150m")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], `{"seq":3,`) || !strings.Contains(lines[3], `"action":"export"`) {
		t.Fatalf("--since 150m gave %d lines: %s", len(lines), r.stdout)
	}
	seg := filepath.Join(t.TempDir(), "since.jsonl")
	os.WriteFile(seg, []byte(r.stdout), 0o600)
	r = runDlqt(t, env, "journal", "verify", "--file", seg)
	if r.code != 0 || !strings.Contains(r.stdout, "entries 3-6 verified") || !strings.Contains(r.stdout, "starts at entry 3") {
		t.Fatalf("segment verify: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}

	for _, args := range [][]string{
		{"journal", "export", "--format", "xml"},
		{"journal", "export", "--since", "yesterday"},
		{"journal", "export", "--since", "-1h"},
		{"journal", "frobnicate"},
	} {
		r := runDlqt(t, env, args...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, r.code, r.stderr)
		}
		assertOneLine(t, r.stderr)
	}
}

// A second dlqt on a journal file in use never hangs: export, which
// journals itself, fails fast with one clear line; verify only reads and
// works beside a running dlqt (issue 11).
func TestJournalInUseIsAClearErrorNotAHang(t *testing.T) {
	env, path := seededJournal(t, 1)
	held, err := journal.Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	start := time.Now()
	r := runDlqt(t, env, "journal", "export")
	if r.code != 1 {
		t.Errorf("export: exit %d: %s", r.code, r.stderr)
	}
	assertOneLine(t, r.stderr, "in use by another dlqt", path)
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("export took %s: it waited instead of failing", took)
	}
	start = time.Now()
	r = runDlqt(t, env, "journal", "verify")
	if r.code != 0 || !strings.Contains(r.stdout, "chain intact") {
		t.Errorf("verify beside a running dlqt: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("verify took %s: it waited instead of reading", took)
	}
}

func TestJournalVerifyOfNoJournalSaysSoAndCreatesNone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "never-written.db")
	r := runDlqt(t, append(isolatedEnv(t), "DLQT_JOURNAL="+path), "journal", "verify")
	if r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.stdout)
	}
	assertOneLine(t, r.stderr, "never-written.db", "does not exist")
	if _, err := os.Stat(path); err == nil {
		t.Error("verify created a journal")
	}
}
