package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/cli"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// TestFullScanCLIGroupsTheWholeQueueOnlyWithConsent: without --yes, dlqt
// fullscan says what it would do and moves nothing; with it, the groups
// count every message, the queue holds the same ids in the same order,
// the journal has the decision and the outcome, and read-only mode
// refuses it.
func TestFullScanCLIGroupsTheWholeQueueOnlyWithConsent(t *testing.T) {
	brokertest.SkipShort(t)
	cfg := brokertest.NewVhost(t, "fullscan-cli")
	conn := brokertest.Dial(t, cfg)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("orders.parking", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	const n = 300
	for i := range n {
		code := []string{"address_invalid", "tax_missing", "timeout"}[i%3]
		body := fmt.Sprintf(`{"message_id":"ord-%04d","event_type":"order.created","failure":{"reason_code":%q}}`, i, code)
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", "orders.parking", true, false, amqp.Publishing{
			MessageId: fmt.Sprintf("ord-%04d", i), ContentType: "application/json", Body: []byte(body),
			Headers: amqp.Table{"x-death": []any{amqp.Table{"queue": "orders", "reason": "rejected", "count": int64(1),
				"time": time.Now().Add(-time.Hour), "exchange": "", "routing-keys": []any{"orders"}}}}})
		if err != nil || !dc.Wait() {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	jpath := filepath.Join(t.TempDir(), "journal.db")
	env := append(brokerEnv(t, cfg), "DLQT_JOURNAL="+jpath, "DLQT_ACTOR=ana@bastion")

	r := runDlqt(t, env, "fullscan", "orders.parking")
	if r.code != 0 || !strings.Contains(r.stderr, "republished to the tail") || !strings.Contains(r.stderr, "nothing moved; --yes runs it") {
		t.Fatalf("without --yes: exit %d: %s", r.code, r.stderr)
	}
	if r := runDlqt(t, env, "--read-only", "fullscan", "orders.parking", "--yes"); r.code != 2 || !strings.Contains(r.stderr, "read-only") {
		t.Fatalf("read-only: exit %d: %s", r.code, r.stderr)
	}
	before := queueIDs(t, cfg)

	rows := decodeJSON[[]cli.GroupRow](t, runDlqt(t, env, "fullscan", "orders.parking", "--yes", "--json", "--window", "16"))
	total := 0
	for _, g := range rows {
		total += g.Count
	}
	if len(rows) != 3 || total != n {
		t.Fatalf("%d groups counting %d messages, want 3 and %d", len(rows), total, n)
	}
	if after := queueIDs(t, cfg); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Fatalf("the queue changed: %d ids after, %d before", len(after), len(before))
	}
	j, err := journal.OpenReadOnly(jpath, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	es, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, e := range es {
		if e.Action == triage.ActionFullScan && e.Queue == "orders.parking" && e.Actor == "ana@bastion" {
			steps = append(steps, fmt.Sprintf("%v %v", e.Details["step"], e.Details["moved"]))
		}
	}
	if strings.Join(steps, ";") != fmt.Sprintf("decision <nil>;outcome %d", n) {
		t.Fatalf("journal steps %v", steps)
	}
}

// queueIDs are the message ids of orders.parking in order, read by a
// browse that puts them all back.
func queueIDs(t *testing.T, cfg interface{ VhostURL() (string, error) }) []string {
	t.Helper()
	u, err := cfg.VhostURL()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := amqp.Dial(u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for {
		d, ok, err := ch.Get("orders.parking", false)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		ids = append(ids, d.MessageId)
	}
	ch.Close() // every one goes back, in its place
	brokertest.WaitDepth(t, conn, "orders.parking", len(ids))
	return ids
}
