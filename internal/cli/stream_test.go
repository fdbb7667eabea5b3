package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// TestGroupsReadTheWholeQueueByDefault: 12,000 parked messages, more than
// the old default bound of 10,000: groups --json counts every one of them
// with no note on stderr, --limit still cuts and says so, messages --json
// streams every id in queue order, and the queue is left as it was.
func TestGroupsReadTheWholeQueueByDefault(t *testing.T) {
	isolate(t)
	const n = 12000
	cfg, conn, want := parkMany(t, "cliwhole", n, "")
	flags := []string{"--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost}
	cmd := func(args ...string) (string, string, int) { return run(t, Assets{}, append(flags, args...)...) }

	out, errOut, code := cmd("groups", "parking", "--json")
	var rows []GroupRow
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil {
		t.Fatalf("groups: exit %d: %s %s", code, out, errOut)
	}
	total := 0
	for _, r := range rows {
		total += r.Count
	}
	if total != n || len(rows) != 3 || errOut != "" {
		t.Fatalf("groups count %d messages in %d groups, want %d in 3; stderr %q", total, len(rows), n, errOut)
	}
	brokertest.WaitDepth(t, conn, "parking", n)

	_, errOut, _ = cmd("groups", "parking", "--json", "--limit", "500")
	if !strings.Contains(errOut, "read the first 500 of") {
		t.Errorf("--limit 500: stderr %q", errOut)
	}
	brokertest.WaitDepth(t, conn, "parking", n)

	out, errOut, code = cmd("messages", "parking", "--json")
	if code != 0 {
		t.Fatalf("messages: exit %d: %s", code, errOut)
	}
	var got []string
	for line := range strings.Lines(out) {
		var row MessageRow
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, row.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("messages --json wrote %d ids, not the %d published in order", len(got), n)
	}
	brokertest.WaitDepth(t, conn, "parking", n)
}
