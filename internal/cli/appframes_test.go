package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
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
