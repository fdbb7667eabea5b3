package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/access"
	"github.com/dlqt/dlqt/internal/serve"
	"github.com/dlqt/dlqt/internal/triage/redact/redacttest"
)

// A session's command is the client's text: the journal keeps it bounded
// (20 arguments of 10 KB made a 200 KB entry) and redacted (a password
// typed as an argument must not land in a log kept for years).
func TestSessionJournalBoundsAndRedactsTheCommand(t *testing.T) {
	a := &app{journalPath: t.TempDir() + "/j.db"}
	j, err := a.openJournal()
	if err != nil {
		t.Fatal(err)
	}
	r := &serveRunner{a: a, journal: j.Shared}
	cmd := []string{"messages", "orders.dlq.q", "--password", "Hunter2-typed", "--where", "text~password=Hunter2-where",
		"--reason", "use Bearer " + redacttest.Stripe}
	for range 20 {
		cmd = append(cmd, strings.Repeat("A", 10<<10))
	}
	s := serve.Session{ID: "3", User: &access.User{Name: "alice", Role: access.Operator}, Fingerprint: "SHA256:abc", Addr: "10.0.0.9:5000", Command: cmd}
	if err := r.Journal(s, true); err != nil {
		t.Fatal(err)
	}
	es, err := j.Entries()
	if err != nil || len(es) != 1 {
		t.Fatalf("%d entries, %v", len(es), err)
	}
	raw, err := json.Marshal(es[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 8<<10 {
		t.Errorf("the session entry is %d bytes, want at most 8 KiB", len(raw))
	}
	for _, secret := range []string{"Hunter2-typed", "Hunter2-where", redacttest.Stripe} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("%q is in the journal: %.600s", secret, raw)
		}
	}
	got, _ := json.Marshal(es[0].Details["command"])
	for _, kept := range []string{`"messages"`, `"orders.dlq.q"`, `"--password"`, `"--where"`, "not recorded"} {
		if !strings.Contains(string(got), kept) {
			t.Errorf("the recorded command lost %s: %.600s", kept, got)
		}
	}
}
