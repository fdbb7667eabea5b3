package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// TestQuarantineCommand plants a message with headers nested 40 deep
// between 5 readable ones on each side: messages names it, quarantine saves
// it and only with --yes removes exactly it, and all 10 others read again.
func TestQuarantineCommand(t *testing.T) {
	home := isolate(t)
	cfg := brokertest.NewVhost(t, "cliquar")
	conn, err := cfg.DialVhost()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("parking", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	deep := amqp.Table{"leaf": "x"}
	for range 39 {
		deep = amqp.Table{"n": deep}
	}
	var want []string
	for i := range 11 {
		p := amqp.Publishing{MessageId: fmt.Sprintf("m-%02d", i), Body: []byte(`{}`), ContentType: "application/json"}
		if i == 5 {
			p.MessageId, p.Headers = "poison", amqp.Table{"deep": deep}
		} else {
			want = append(want, p.MessageId)
		}
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", "parking", false, false, p)
		if err != nil || !dc.Wait() {
			t.Fatalf("publish: %v", err)
		}
	}
	flags := []string{"--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost}
	cmd := func(args ...string) (string, string, int) { return run(t, Assets{}, append(flags, args...)...) }

	out, errOut, code := cmd("messages", "parking", "--json")
	if code != 0 {
		t.Fatalf("messages: exit %d: %s", code, errOut)
	}
	ids, unreadable := jsonLines(t, out)
	if !slices.Equal(ids, want[:5]) || !strings.Contains(unreadable, `"position":5`) || !strings.Contains(unreadable, "nested 40 deep") {
		t.Fatalf("messages --json: ids %v, unreadable %s", ids, unreadable)
	}
	if !strings.Contains(errOut, "dlqt quarantine parking --position 5") {
		t.Errorf("stderr does not show the way past it: %s", errOut)
	}

	out, errOut, code = cmd("discard", "parking", "--id", "m-00", "--reason", "test", "--yes")
	if code == 0 || !strings.Contains(errOut, "cannot decode") || !strings.Contains(errOut, "nothing taken") {
		t.Fatalf("discard past an unreadable message: exit %d: %s%s", code, out, errOut)
	}
	if d := brokertest.Depth(t, conn, "parking"); d != 11 {
		t.Fatalf("after the failed discard the queue holds %d, want 11", d)
	}

	out, errOut, code = cmd("quarantine", "parking", "--position", "4")
	if code == 0 || !strings.Contains(errOut, "readable") {
		t.Fatalf("quarantine of a readable message: exit %d: %s%s", code, out, errOut)
	}
	out, errOut, code = cmd("quarantine", "parking", "--position", "5")
	if code != 0 || !strings.Contains(out, "nothing removed") {
		t.Fatalf("quarantine without --yes: exit %d: %s%s", code, out, errOut)
	}
	if d := brokertest.Depth(t, conn, "parking"); d != 11 {
		t.Fatalf("without --yes the queue holds %d, want 11", d)
	}
	out, errOut, code = cmd("quarantine", "parking", "--position", "5", "--yes")
	if code != 0 || !strings.Contains(out, "removed it") {
		t.Fatalf("quarantine --yes: exit %d: %s%s", code, out, errOut)
	}
	brokertest.WaitDepth(t, conn, "parking", 10)

	out, errOut, code = cmd("messages", "parking", "--json")
	if ids, unreadable = jsonLines(t, out); code != 0 || !slices.Equal(ids, want) || unreadable != "" {
		t.Fatalf("after quarantine: exit %d, ids %v, unreadable %q: %s", code, ids, unreadable, errOut)
	}
	checkQuarantineJournal(t, home)
}

// jsonLines splits messages --json output into the ids of the messages and
// the unreadable line, if any.
func jsonLines(t *testing.T, out string) (ids []string, unreadable string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(line, `"unreadable"`) {
			unreadable = line
			continue
		}
		var row struct {
			MessageID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("bad line %q: %v", line, err)
		}
		ids = append(ids, row.MessageID)
	}
	return ids, unreadable
}

// checkQuarantineJournal: two saves (one per run), then the removal's
// decision and outcome, each naming the file, whose hash matches.
func checkQuarantineJournal(t *testing.T, home string) {
	t.Helper()
	j, err := journal.Open(filepath.Join(home, "state", "dlqt", "journal.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	es, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range es {
		if e.Action != triage.ActionQuarantine {
			continue
		}
		reasons = append(reasons, e.Reason)
		if !slices.Equal(e.MessageIDs, []string{"poison"}) {
			t.Errorf("entry %d names %v", e.Seq, e.MessageIDs)
		}
		file, _ := e.Details["file"].(string)
		if _, err := os.Stat(file); err != nil {
			t.Errorf("entry %d: file %q: %v", e.Seq, file, err)
		}
	}
	if !slices.Equal(reasons, []string{"saved", "saved", "remove", "removed"}) {
		t.Errorf("journal quarantine entries %v", reasons)
	}
}
