package broker_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// rejectAll takes every message of queue and rejects it without requeue, so
// its dead-letter exchange parks it.
func (f *fixture) rejectAll(queue string) {
	f.t.Helper()
	for {
		d, ok, err := f.ch.Get(queue, false)
		if err != nil {
			f.t.Fatal(err)
		}
		if !ok {
			return
		}
		if err := d.Reject(false); err != nil {
			f.t.Fatal(err)
		}
	}
}

// Issue 20, item 3: sixteen ADDRESS_INVALID envelopes and a seventeenth
// sent gzip-compressed die in orders.q; all seventeen group together, the
// gzip one is found by its envelope's message_id (it has no AMQP one), and
// a replay of it publishes its bytes and content_encoding unchanged.
func TestGzipEnvelopeGroupsWithItsReasonCodeAndReplaysUnchanged(t *testing.T) {
	f := newFixture(t, "gzip-envelope")
	f.declare("orders.dlq", nil)
	f.declare("orders.q", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	envelope := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"message_id":"ord-%02d","event_type":"order.placed","failure":{"reason_code":"ADDRESS_INVALID"},"data":{"tenant":"acme","street":"%0200d"}}`, i, i))
	}
	for i := range 16 {
		f.publishOne("", "orders.q", amqp.Publishing{ContentType: "application/json", Body: envelope(i)})
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(envelope(16))
	w.Close()
	f.publishOne("", "orders.q", amqp.Publishing{ContentType: "application/json", ContentEncoding: "gzip", Body: gz.Bytes()})
	f.rejectAll("orders.q")
	f.waitDepth("orders.dlq", 17)

	ctx := context.Background()
	live := f.live()
	in, err := triage.Inspect(ctx, live, "orders.dlq", triage.BrowseOptions{}, redact.New())
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Groups) != 1 || in.Groups[0].ReasonCode != "ADDRESS_INVALID" || in.Groups[0].Reason != triage.ReasonRejected || in.Groups[0].Count != 17 {
		t.Fatalf("groups = %+v, want rejected / ADDRESS_INVALID 17", in.Groups)
	}
	gzipped := in.Messages[16]
	if gzipped.ID != "ord-16" || gzipped.Decoding == nil || gzipped.Decoding.Encoding != "gzip" || gzipped.Decoding.EncodedBytes != gz.Len() {
		t.Fatalf("gzip message: id %q, decoding %+v", gzipped.ID, gzipped.Decoding)
	}

	plan, err := replay.NewPlan(in, triage.Selection{IDs: []string{"ord-16"}}, replay.Options{Rate: 50, Canary: 1, CanaryRate: 50, Observe: 100 * time.Millisecond, AutoRamp: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Destinations) != 1 || plan.Destinations[0].Route != (triage.Route{RoutingKey: "orders.q"}) {
		t.Fatalf("plan destinations = %+v, want orders.q", plan.Destinations)
	}
	f.ch.QueueDelete("orders.q", false, false, false) // the replayed copy stays where it lands
	f.declare("orders.q", nil)
	port, err := live.OpenReplay(ctx, plan.ID, "orders.dlq")
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	j, err := journal.Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	res, err := replay.Run(ctx, plan, port, journal.NewRecorder(j, "test", "host"), nil, nil)
	if err != nil || res.Resolved != 1 {
		t.Fatalf("replay: %+v, %v", res, err)
	}
	port.Close() // releases the sixteen the hold kept
	f.waitDepth("orders.q", 1)
	got := f.drain("orders.q")[0]
	if !bytes.Equal(got.Body, gz.Bytes()) || got.ContentEncoding != "gzip" {
		t.Errorf("replayed body %d bytes encoding %q, want the %d gzip bytes as read", len(got.Body), got.ContentEncoding, gz.Len())
	}
	f.waitDepth("orders.dlq", 16)
}

// A gzip message with no AMQP message_id is discarded by its envelope's
// id, as the screen named it: the discard's pass decodes it the same way,
// and the messages it leaves keep their bytes and encoding.
func TestDiscardFindsAGzipMessageByItsEnvelopeID(t *testing.T) {
	f := newFixture(t, "gzip-discard")
	f.declare("orders.parking", nil)
	var bodies [][]byte
	for i := range 3 {
		var gz bytes.Buffer
		w := gzip.NewWriter(&gz)
		fmt.Fprintf(w, `{"message_id":"ord-%d","failure":{"reason_code":"ADDRESS_INVALID"}}`, i)
		w.Close()
		bodies = append(bodies, gz.Bytes())
		f.publishOne("", "orders.parking", amqp.Publishing{ContentType: "application/json", ContentEncoding: "gzip", Body: gz.Bytes()})
	}
	l := f.live()
	top, err := l.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var rec recorded
	res, err := triage.Discard(context.Background(), l, top, &rec, triage.DiscardRequest{
		Vhost: f.cfg.Vhost, Queue: "orders.parking", Reason: "test", Selection: triage.Selection{IDs: []string{"ord-1"}},
	})
	if err != nil || len(res.Discarded) != 1 || res.Discarded[0] != "ord-1" {
		t.Fatalf("result %+v, %v", res, err)
	}
	f.waitDepth("orders.parking", 2)
	left := f.drain("orders.parking")
	if !bytes.Equal(left[0].Body, bodies[0]) || !bytes.Equal(left[1].Body, bodies[2]) || left[1].ContentEncoding != "gzip" {
		t.Errorf("left %d messages, not the gzip bodies ord-0 and ord-2 as published", len(left))
	}
}
