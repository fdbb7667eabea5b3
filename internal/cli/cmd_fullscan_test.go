package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
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
