package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/cli"
	"github.com/dlqt/dlqt/internal/triage"
)

// With no filters.tenant_path, --where tenant= finds the tenant under the
// common keys and says on stderr which one it used.
func TestTenantWithoutAPathIsDetectedAndNamed(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	msg := func(id, body string, h triage.Headers) triage.Message {
		return triage.Message{Queue: "park", Body: []byte(body), Headers: h,
			Properties: triage.Properties{MessageID: id, ContentType: "application/json"}}
	}
	msgs := []triage.Message{
		msg("t-1", `{"event_type":"order.created","tenant_id":"acme"}`, nil),
		msg("t-2", `{"event_type":"order.created","data":{"account_id":"acme"}}`, nil),
		msg("t-3", `{"event_type":"order.created"}`, triage.Headers{"tenant": "acme"}),
		msg("t-4", `{"event_type":"order.created","tenant_id":"globex"}`, nil),
	}
	for i := range msgs {
		msgs[i].Position = i
	}
	snap := filepath.Join(t.TempDir(), "tenants.json")
	err := broker.WriteSnapshotFile(snap, broker.SnapshotFile{Format: broker.SnapshotFormat, Source: "test", TakenAt: now,
		Topology: triage.Topology{Vhost: "t", Queues: []triage.Queue{{Name: "park", Type: triage.QueueClassic, Messages: len(msgs)}}},
		Batches:  []triage.Batch{{Vhost: "t", Queue: "park", Depth: len(msgs), Limit: 100, TakenAt: now, Messages: msgs}}})
	if err != nil {
		t.Fatal(err)
	}
	r := runDlqt(t, isolatedEnv(t), "--snapshot", snap, "messages", "park", "--json", "--where", "tenant=acme")
	if r.code != 0 {
		t.Fatalf("tenant= without a path: exit %d: %s", r.code, r.stderr)
	}
	var ids []string
	for _, m := range decodeLines[cli.MessageRow](t, r) {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "t-1,t-2,t-3" {
		t.Errorf("tenant=acme matched %v, want t-1, t-2, t-3", ids)
	}
	for _, want := range []string{"dlqt: note: tenant read from", "envelope tenant_id", "payload data.account_id", "header tenant", "filters.tenant_path"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	if r := runDlqt(t, isolatedEnv(t), "messages", "--help"); !strings.Contains(r.stdout, "tenant_id, tenantId, customer_id") {
		t.Errorf("--where help does not list the keys:\n%s", r.stdout)
	}
}
