package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/filter"
)

// TestAppFramesFromTheConfigPlaceTheFailure: the config's app_frames reach
// the fingerprint, so the bundled demo's Spring failure is placed in the
// listener the operator calls theirs rather than the first non-framework
// frame, and groups --json carries exception_type and thrown_at.
func TestAppFramesFromTheConfigPlaceTheFailure(t *testing.T) {
	home := isolate(t)
	snap, err := os.ReadFile(filepath.Join("..", "..", "testdata", "demo.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	groups := func(args ...string) map[string]GroupRow {
		t.Helper()
		stdout, stderr, code := run(t, Assets{DemoSnapshot: snap}, append(args, "--demo", "groups", "legacy.events.failed", "--json")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var rows []GroupRow
		if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		byCode := map[string]GroupRow{}
		for _, r := range rows {
			byCode[r.ReasonCode] = r
		}
		return byCode
	}
	def, ok := groups()["LedgerPeriodClosedException @ PostingService.post"]
	if !ok || def.ExceptionType != "com.acme.ledger.LedgerPeriodClosedException" || def.ThrownAt != "com.acme.ledger.PostingService.post:118" {
		t.Fatalf("default fingerprint: %+v (%v)", def, ok)
	}
	cfg := filepath.Join(home, "dlqt.yaml")
	if err := os.WriteFile(cfg, []byte("app_frames: ['com.acme.ledger.LedgerListener*']\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mine, ok := groups("--config", cfg)["LedgerPeriodClosedException @ LedgerListener.onEntry"]
	if !ok || mine.ThrownAt != "com.acme.ledger.LedgerListener.onEntry:42" {
		t.Fatalf("with app_frames: %+v (%v)", mine, ok)
	}
}

// TestPrintGroupsShowsTheFingerprintWithItsLine: `dlqt groups` without
// --json reads like the groups screen: short type @ where:line.
func TestPrintGroupsShowsTheFingerprintWithItsLine(t *testing.T) {
	var b strings.Builder
	rows := []GroupRow{{Reason: "published", ReasonCode: "NullPointerException @ InventoryService.reserve", Count: 3412,
		ExceptionType: "java.lang.NullPointerException", ThrownAt: "com.acme.inventory.InventoryService.reserve:88", EventTypes: []string{}}}
	if err := printGroups(&b, triage.Batch{Queue: "inventory.dlq"}, 3412, filter.Filter{}, rows, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "published  NullPointerException @ InventoryService.reserve:88  3412") {
		t.Fatalf("printed:\n%s", b.String())
	}
}

// TestGroupSelectsAFingerprint: --group takes a fingerprint as a code
// (without its line), so a discard or a replay plan picks its messages.
func TestGroupSelectsAFingerprint(t *testing.T) {
	isolate(t)
	snap, err := os.ReadFile(filepath.Join("..", "..", "testdata", "demo.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, Assets{DemoSnapshot: snap}, "--demo", "discard", "legacy.events.failed",
		"--group", "published/LedgerPeriodClosedException @ PostingService.post", "--reason", "INC-7", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var plan struct {
		Count int      `json:"count"`
		IDs   []string `json:"ids"`
	}
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil || plan.Count != 1 || len(plan.IDs) != 1 || plan.IDs[0] != "leg-0001" {
		t.Fatalf("plan %+v (%v):\n%s", plan, err, stdout)
	}
}
