package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/trail"
)

// Three hosts (three journals, three homes) keep one trail on the audit
// stream: each discard's entries are confirmed there first; verify
// --stream checks every writer's chain and names an entry someone
// published by hand; a journal put back from an older copy is caught by
// the cross-check; a user who may not write to the stream takes no action.
func TestTheTeamsTrailOnAStream(t *testing.T) {
	isolate(t)
	cfg := brokertest.NewVhost(t, "clitrail")
	conn := brokertest.Dial(t, cfg)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	if _, err := ch.QueueDeclare("orders.dlq", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if err := ch.PublishWithContext(context.Background(), "", "orders.dlq", false, false, amqp.Publishing{
			MessageId: fmt.Sprintf("m-%d", i), Body: []byte(`{"n":1}`), Headers: amqp.Table{"x-original-routingKey": "orders"}}); err != nil {
			t.Fatal(err)
		}
	}
	brokertest.WaitDepth(t, conn, "orders.dlq", 6)
	t.Setenv("DLQT_AUDIT_STREAM", "dlqt.audit")
	flags := []string{"--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost}
	dir := t.TempDir()
	hosts := []string{"a", "b", "c"}
	journalOf := func(h string) string { return filepath.Join(dir, h, "journal.db") }
	as := func(h string, args ...string) (string, string, int) {
		t.Helper()
		t.Setenv("HOME", filepath.Join(dir, h))
		return run(t, Assets{}, append(append(append([]string{}, flags...), "--journal", journalOf(h), "--actor", h), args...)...)
	}
	for i, h := range hosts {
		if out, errOut, code := as(h, "discard", "orders.dlq", "--id", fmt.Sprintf("m-%d", i), "--reason", "dup", "--yes"); code != 0 {
			t.Fatalf("discard on host %s: exit %d\n%s\n%s", h, code, out, errOut)
		}
	}
	brokertest.WaitDepth(t, conn, "orders.dlq", 3)
	// Host a's journal as it is now, to be put back later.
	saved := t.TempDir()
	copyJournal(t, journalOf("a"), saved)
	if out, errOut, code := as("a", "discard", "orders.dlq", "--id", "m-3", "--reason", "dup", "--yes"); code != 0 {
		t.Fatalf("second discard on host a: exit %d\n%s\n%s", code, out, errOut)
	}

	out, errOut, code := as("b", "journal", "verify", "--stream")
	t.Logf("verify --stream:\n%s", out)
	if code != 0 || !strings.Contains(out, "of 3 writers") || !strings.Contains(out, "every writer's chain intact") {
		t.Fatalf("verify --stream: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, h := range hosts {
		if !strings.Contains(out, "@") || !strings.Contains(out, journalOf(h)) {
			t.Errorf("verify --stream does not name the writer of %s:\n%s", journalOf(h), out)
		}
	}
	// Every local journal matches the stream.
	for _, h := range hosts {
		if out, errOut, code := as(h, "journal", "verify"); code != 0 || !strings.Contains(out, "the journal matches what the stream holds") {
			t.Fatalf("journal verify on host %s: exit %d\n%s\n%s", h, code, out, errOut)
		}
	}

	// Host a's journal put back from the copy: the stream has its last
	// entries, the journal does not.
	copyJournal(t, filepath.Join(saved, "journal.db"), filepath.Dir(journalOf("a")))
	out, errOut, code = as("a", "journal", "verify")
	t.Logf("verify of a:\n%s", out)
	if code == 0 || !strings.Contains(out, "missing from the journal: it was truncated or put back from an older copy") {
		t.Fatalf("verify of a journal put back: exit %d\n%s\n%s", code, out, errOut)
	}

	// A record published by hand that imitates the next entry of the last
	// record's writer.
	stdout, _, _ := as("c", "journal", "export", "--stream")
	var last trail.Record
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if err := json.Unmarshal([]byte(line), &last); err != nil {
			t.Fatalf("export --stream line %q: %v", line, err)
		}
	}
	forged := last
	forged.Entry.Seq++
	forged.Entry.PrevHash = last.Entry.Hash
	forged.Entry.Reason = "approved by nobody"
	body, _ := json.Marshal(forged)
	if err := ch.PublishWithContext(context.Background(), "", "dlqt.audit", false, false, amqp.Publishing{Body: body}); err != nil {
		t.Fatal(err)
	}
	// And one that chains: its hash recomputed, as anyone can. Only the
	// writer's key could sign it.
	chained := forged
	chained.Entry.Hash, chained.Key, chained.Sig = journal.HashOf(chained.Entry), "", ""
	body, _ = json.Marshal(chained)
	if err := ch.PublishWithContext(context.Background(), "", "dlqt.audit", false, false, amqp.Publishing{Body: body}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = as("b", "journal", "verify", "--stream")
	t.Logf("verify --stream:\n%s", out)
	prefix := "writer " + last.Writer + ", entry " + fmt.Sprint(forged.Entry.Seq) + ": "
	if code == 0 || !strings.Contains(out, prefix+"its hash is not its content's") || !strings.Contains(out, prefix+"unsigned, where this writer's records are signed by SHA256:") {
		t.Fatalf("verify --stream after two forged records: exit %d\n%s\n%s", code, out, errOut)
	}

	// A user who may read but not write (the default exchange) takes no
	// action: the intent is not on the stream, nothing is discarded.
	ro, _ := brokertest.User(t, cfg, &brokertest.Perms{Configure: ".*", Write: "^$", Read: ".*"}, "management")
	t.Setenv("HOME", filepath.Join(dir, "d"))
	out, errOut, code = run(t, Assets{}, "--amqp-url", ro.AMQPURL, "--mgmt-url", ro.MgmtURL, "--vhost", cfg.Vhost, "--journal", journalOf("d"),
		"discard", "orders.dlq", "--id", "m-5", "--reason", "dup", "--yes")
	t.Logf("refused:\n%s", errOut)
	if code == 0 || !strings.Contains(errOut, `audit stream "dlqt.audit" cannot be written`) || !strings.Contains(errOut, "the trail is offline") {
		t.Fatalf("discard by a user who may not write the stream: exit %d\n%s\n%s", code, out, errOut)
	}
	brokertest.WaitDepth(t, conn, "orders.dlq", 2)
}

// copyJournal copies a journal file and its head and checkpoint files into dir.
func copyJournal(t *testing.T, path, dir string) {
	t.Helper()
	for _, suffix := range []string{"", ".head", ".checkpoint"} {
		data, err := os.ReadFile(path + suffix)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(path)+suffix), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
