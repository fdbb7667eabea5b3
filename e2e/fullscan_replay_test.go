package e2e

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/triage"
)

// `dlqt fullscan` marks each copy it moves with dlqt-full-scan; a later
// `dlqt replay` of one of them publishes every header it was delivered with
// and its own replay headers, never the scan's mark, which is bookkeeping
// of the parking queue. `dlqt messages` names every message alike before
// and after the scan, one without a message_id (named by its content)
// included.
func TestReplayAfterAFullScanLeavesTheScanMarkInTheParkingQueue(t *testing.T) {
	brokertest.SkipShort(t)
	b := newReplayBed(t, "fullscan-replay")
	b.park(3)
	if _, err := b.ch.PublishWithDeferredConfirmWithContext(context.Background(), "", bedParking, true, false, amqp.Publishing{
		ContentType: "application/json", Headers: amqp.Table{"tenant": "globex"}, Body: []byte(`{"amount":9}`)}); err != nil {
		t.Fatal(err)
	}
	b.waitDepth(bedParking, 4)
	before, _, _ := messagesMarked(t, b.env, bedParking)
	if r := runDlqt(t, b.env, "fullscan", bedParking, "--yes"); r.code != 0 {
		t.Fatalf("fullscan: exit %d: %s", r.code, r.stderr)
	}
	after, _, _ := messagesMarked(t, b.env, bedParking)
	if !slices.Equal(after, before) {
		t.Errorf("dlqt messages names %q after the full scan, %q before", after, before)
	}
	var parked amqp.Delivery
	for _, d := range b.read(bedParking) {
		if d.MessageId == "order-00001" {
			parked = d
		}
	}
	if parked.Headers[broker.ScanHeader] == nil {
		t.Fatalf("order-00001 carries no %s after the full scan: %v", broker.ScanHeader, parked.Headers)
	}

	if r := runDlqt(t, b.env, "replay", bedParking, "--id", "order-00001", "--canary", "1", "--observe", "1s", "--yes"); r.code != 0 {
		t.Fatalf("replay: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	b.waitDepth(bedOrders, 1)
	copies := b.read(bedOrders)
	got := maps.Clone(copies[0].Headers)
	if v, ok := got[broker.ScanHeader]; ok {
		t.Errorf("the copy at the destination carries %s = %v", broker.ScanHeader, v)
	}
	for _, k := range []string{triage.HeaderReplayID, triage.HeaderReplayItem, triage.HeaderReplayedAt, triage.HeaderAttempts, triage.HeaderDeaths} {
		delete(got, k) // the replay's own
	}
	want := maps.Clone(parked.Headers)
	delete(want, broker.ScanHeader)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the copy's headers besides the replay's:\n%#v\nwant those the parked message was delivered with, but the scan's mark:\n%#v", got, want)
	}
}
