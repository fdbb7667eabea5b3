package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// A replay plan in an export has snake_case keys and durations a person
// can read; nothing Go-shaped leaks into the evidence.
func TestExportedReplayPlanHasSnakeCaseKeysAndReadableDurations(t *testing.T) {
	j := open(t)
	g := triage.GroupKey{Reason: "rejected", Code: "address_invalid"}
	plan := replay.Plan{ID: "rp-1", Vhost: "v", Queue: "orders.dlq.q",
		Selection: triage.Selection{Group: &g, IDs: []string{}},
		Options:   replay.Options{Rate: 50, Canary: 5, CanaryRate: 1, Observe: 10 * time.Second, ConfirmTimeout: 30 * time.Second}}
	if err := NewRecorder(j, "ana", "h").Record(triage.Record{Action: triage.ActionReplayPlan, Queue: "orders.dlq.q",
		Details: map[string]any{"replay_id": "rp-1", "plan": plan}}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := j.Export(&buf, FormatJSONL, time.Time{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`"observe":"10s"`, `"confirm_timeout":"30s"`, `"selection":{"group":{"any_code":false,"code":"address_invalid","reason":"rejected"},"ids":[]}`} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %s:\n%s", want, out)
		}
	}
	for _, bad := range []string{`"IDs"`, `"Group"`, `"AnyCode"`, `10000000000`} {
		if strings.Contains(out, bad) {
			t.Errorf("export has %s:\n%s", bad, out)
		}
	}
	st, err := replay.Find(j, "rp-1")
	if err != nil || st.Plan.Options.Observe != 10*time.Second || st.Plan.Selection.Group == nil || *st.Plan.Selection.Group != g {
		t.Errorf("the plan read back = %+v, %v", st.Plan, err)
	}
}

// A plan journalled before (Go keys, nanoseconds) still reads back whole,
// so a replay interrupted under the previous build can be resumed.
func TestAPlanJournalledBeforeReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	j, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	raw, err := os.ReadFile(filepath.Join("testdata", "before-version.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := ReadJSONL(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(j, "ana", "h")
	if err := rec.Record(triage.Record{Action: old[0].Action, Queue: old[0].Queue, Details: old[0].Details}); err != nil {
		t.Fatal(err)
	}
	st, err := replay.Find(j, "rp-old")
	if err != nil {
		t.Fatal(err)
	}
	o, g := st.Plan.Options, st.Plan.Selection.Group
	if o.Observe != 10*time.Second || o.ConfirmTimeout != 30*time.Second || g == nil ||
		*g != (triage.GroupKey{Reason: "rejected", Code: "address_invalid"}) {
		t.Errorf("old plan read back as options %+v, group %+v", o, g)
	}
}
