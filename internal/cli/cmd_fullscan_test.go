package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// TestFullScanStreamsTheQueueThroughItsGroups: dlqt fullscan of 30,000 ×
// 1 KiB groups every message while it moves them, keeping none: the live
// heap grows by a window of messages and the groups, far less than the
// 30 MiB of bodies (it used to keep every message and its analysis), and
// the queue ends with all of them.
func TestFullScanStreamsTheQueueThroughItsGroups(t *testing.T) {
	isolate(t)
	const n = 30000
	cfg, conn, _ := parkMany(t, "clifullscan", n, strings.Repeat("p", 1000))

	stop := make(chan struct{})
	grew := brokertest.LiveHeapGrowth(stop)
	out, errOut, code := run(t, Assets{}, "--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost,
		"fullscan", "parking", "--yes", "--json", "--window", "256")
	close(stop)
	peak := grew()
	if code != 0 {
		t.Fatalf("fullscan: exit %d: %s", code, errOut)
	}
	var rows []GroupRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("fullscan --json: %v: %s", err, out)
	}
	total := 0
	for _, r := range rows {
		total += r.Count
	}
	if total != n || len(rows) != 3 {
		t.Fatalf("groups count %d messages in %d groups, want %d in 3", total, len(rows), n)
	}
	t.Logf("fullscan of %d × 1 KiB: live heap grew by at most %.1f MiB", n, float64(peak)/(1<<20))
	const bound = 12 << 20
	if peak > bound {
		t.Errorf("the live heap grew by %.1f MiB during a full scan of %d × 1 KiB, want < %d MiB: it keeps what it reads", float64(peak)/(1<<20), n, bound>>20)
	}
	brokertest.WaitDepth(t, conn, "parking", n)
}

// TestInterruptedScansAreThoseSinceTheLastWholeOne: the next full scan
// pairs copies against the windows of every scan since the last whole one
// (one killed with no outcome, one that ended with an error, one that
// read to its end but left the queue holding more than it moved), and
// not those of the whole scan or before it, nor another queue's.
func TestInterruptedScansAreThoseSinceTheLastWholeOne(t *testing.T) {
	a := &app{journalPath: filepath.Join(t.TempDir(), "journal.db"), actor: "tester@host", host: "host"}
	j, err := a.openJournal()
	if err != nil {
		t.Fatal(err)
	}
	rec := journal.NewRecorder(j, a.actor, a.host)
	record := func(queue, scan, step string, ids []string, details map[string]any) {
		t.Helper()
		if details == nil {
			details = map[string]any{}
		}
		details["scan"], details["step"] = scan, step
		if step == "in-flight" {
			details["contents"] = slices.Repeat([]string{"sha256:c"}, len(ids))
		}
		if err := rec.Record(triage.Record{Action: triage.ActionFullScan, Vhost: "v", Queue: queue, MessageIDs: ids, Details: details}); err != nil {
			t.Fatal(err)
		}
	}
	record("q", "fs-old", "decision", nil, nil)
	record("q", "fs-old", "in-flight", []string{"o1"}, nil)
	record("q", "fs-whole", "decision", nil, nil)
	record("q", "fs-whole", "in-flight", []string{"w1"}, nil)
	record("q", "fs-whole", "outcome", nil, map[string]any{"whole": true})
	record("q", "fs-more", "decision", nil, nil)
	record("q", "fs-more", "in-flight", []string{"m1"}, nil)
	record("q", "fs-more", "outcome", nil, map[string]any{"whole": false})
	record("q", "fs-failed", "decision", nil, nil)
	record("q", "fs-failed", "in-flight", []string{"f1", "f2"}, nil)
	record("q", "fs-failed", "in-flight", []string{"f3"}, nil)
	record("q", "fs-failed", "outcome", nil, map[string]any{"whole": false, "error": "connection closed"})
	record("other", "fs-elsewhere", "in-flight", []string{"e1"}, nil)
	record("q", "fs-killed", "decision", nil, nil)
	record("q", "fs-killed", "in-flight", []string{"k1"}, nil)

	scans, err := a.interruptedScans("v", "q")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range scans {
		slices.Sort(s.IDs)
		got = append(got, fmt.Sprintf("%s %v %d", s.ScanID, s.IDs, len(s.Contents)))
	}
	want := []string{"fs-killed [k1] 1", "fs-failed [f1 f2 f3] 3", "fs-more [m1] 1"}
	if !slices.Equal(got, want) {
		t.Fatalf("interrupted scans %q, want %q", got, want)
	}
}
