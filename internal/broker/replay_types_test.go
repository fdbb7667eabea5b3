package broker_test

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// typedParked is a parked message with a header of every AMQP field type
// (nested tables and arrays included) and every property set; it returns
// the publishing and its header table as sent.
func typedParked(id string) (amqp.Publishing, amqp.Table) {
	ts := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	original := amqp.Table{
		"i8": int8(-8), "i16": int16(-16), "x-retry-count": int32(3), "i64": int64(-64),
		"u8": uint8(8), "u16": uint16(16), "u32": uint32(32),
		"f32": float32(1.5), "f64": 2.25, "dec": amqp.Decimal{Scale: 2, Value: 1250},
		"s": "text", "b": true, "nil": nil, "ts": ts, "raw": []byte{0, 1, 0xff},
		"list":                []any{int32(1), "two", amqp.Table{"three": int16(3)}, float32(0.5)},
		"nested":              amqp.Table{"deeper": amqp.Table{"n": uint8(1), "d": amqp.Decimal{Scale: 1, Value: 5}}},
		"x-original-exchange": "ledger", "x-original-routingKey": "entry.posted",
	}
	return amqp.Publishing{
		MessageId: id, CorrelationId: "c-1", ContentType: "application/json", ContentEncoding: "identity",
		Type: "entry", AppId: "ledger", ReplyTo: "replies", Expiration: "600000", Priority: 3,
		DeliveryMode: amqp.Persistent, Timestamp: ts, Headers: original, Body: []byte(`{"n":1}`),
	}, original
}

// declareLedger declares the destination (exchange ledger, key
// entry.posted to queue ledger.entries) and the parking queue parked.
func (f *fixture) declareLedger() {
	f.t.Helper()
	if err := f.ch.ExchangeDeclare("ledger", "direct", true, false, false, false, nil); err != nil {
		f.t.Fatal(err)
	}
	f.declare("ledger.entries", nil)
	if err := f.ch.QueueBind("ledger.entries", "entry.posted", "ledger", false, nil); err != nil {
		f.t.Fatal(err)
	}
	f.declare("parked", nil)
}

// replayToLedger holds id in parked, publishes its copy with the replay's
// headers (replay.CopyHeaders) to the ledger and returns the copy as
// ledger.entries received it.
func (f *fixture) replayToLedger(replayID, id string) amqp.Delivery {
	f.t.Helper()
	ctx := context.Background()
	port, err := f.live().OpenReplay(ctx, replayID, "parked")
	if err != nil {
		f.t.Fatal(err)
	}
	defer port.Close()
	held, err := port.Hold(ctx, "parked", []string{id}, replayID)
	if err != nil || len(held) != 1 {
		f.t.Fatalf("held %d: %v", len(held), err)
	}
	m, err := port.Load(ctx, held[0].ID)
	if err != nil {
		f.t.Fatal(err)
	}
	m.Headers = replay.CopyHeaders(m, held[0].ID, replayID, 1, time.Now())
	pc, err := port.Publish(ctx, replay.Publishing{ItemID: held[0].ID, Route: triage.Route{Exchange: "ledger", RoutingKey: "entry.posted"}, Message: m})
	if err != nil {
		f.t.Fatal(err)
	}
	if res := pc.Wait(ctx); !res.Confirmed {
		f.t.Fatalf("not confirmed: %s", res.Why)
	}
	f.waitDepth("ledger.entries", 1)
	return f.drain("ledger.entries")[0]
}

// assertKeptAsSent checks that the copy got carries every header of
// original with its name, AMQP type and value, and every property of sent.
func assertKeptAsSent(t *testing.T, got amqp.Delivery, sent amqp.Publishing, original amqp.Table) {
	t.Helper()
	original = maps.Clone(original)
	original["ts"] = time.Unix(sent.Timestamp.Unix(), 0) // amqp091-go decodes timestamps in local time
	kept := amqp.Table{}
	for k := range original {
		kept[k] = got.Headers[k]
	}
	if !reflect.DeepEqual(kept, original) {
		for k, v := range original {
			if !reflect.DeepEqual(got.Headers[k], v) {
				t.Errorf("header %s: sent %T %#v, copy has %T %#v", k, v, v, got.Headers[k], got.Headers[k])
			}
		}
	}
	props := func(d amqp.Delivery) []any {
		return []any{d.MessageId, d.CorrelationId, d.ContentType, d.ContentEncoding, d.Type, d.AppId, d.ReplyTo, d.Expiration, d.Priority, d.DeliveryMode, d.Timestamp.UTC(), string(d.Body)}
	}
	want := []any{sent.MessageId, sent.CorrelationId, sent.ContentType, sent.ContentEncoding, sent.Type, sent.AppId, sent.ReplyTo, sent.Expiration, sent.Priority, sent.DeliveryMode, sent.Timestamp, string(sent.Body)}
	if !reflect.DeepEqual(props(got), want) {
		t.Errorf("properties %v, want %v", props(got), want)
	}
}

// A replayed copy carries every header with the AMQP field type it was
// delivered with: a Java consumer reading x-retry-count as an Integer must
// not get a Long. The copy's table is compared with reflect.DeepEqual, so
// int8 vs int64 or float32 vs float64 fails it.
func TestReplayKeepsEveryHeaderFieldType(t *testing.T) {
	f := newFixture(t, "replay-types")
	f.declareLedger()
	sent, original := typedParked("typed-1")
	f.publishOne("", "parked", sent)

	got := f.replayToLedger("rp-types", "typed-1")
	assertKeptAsSent(t, got, sent, original)
	if got.Headers["dlqt-replay-id"] != "rp-types" {
		t.Errorf("dlqt-replay-id = %#v", got.Headers["dlqt-replay-id"])
	}
}

// A full scan marks each copy it moves with dlqt-full-scan, dlqt's own
// bookkeeping: the messages keep their identities (the read path leaves
// dlqt-* headers out), and a later replay publishes neither that mark nor
// anything else the original did not carry beyond the replay's own headers;
// every other header and property goes out exactly as delivered.
func TestReplayOfAFullScannedMessageLeavesTheScanMarkBehind(t *testing.T) {
	f := newFixture(t, "replay-scanned")
	f.declareLedger()
	sent, original := typedParked("typed-1")
	f.publishOne("", "parked", sent)
	anonymous, _ := typedParked("") // identified by its content alone
	anonymous.Body = []byte(`{"n":2}`)
	f.publishOne("", "parked", anonymous)

	l := f.live()
	before := readIDs(t, l, "parked")
	res, err := l.FullScan(context.Background(), "parked", broker.FullScanOptions{})
	if err != nil || res.Moved != 2 {
		t.Fatalf("full scan: %+v, %v", res, err)
	}
	if after := readIDs(t, l, "parked"); !slices.Equal(after, before) {
		t.Errorf("the ids after a full scan are %q, before it %q: the scan mark counts in the identity", after, before)
	}

	got := f.replayToLedger("rp-scanned", "typed-1")
	if v, ok := got.Headers[broker.ScanHeader]; ok {
		t.Errorf("the destination's copy carries %s = %#v", broker.ScanHeader, v)
	}
	assertKeptAsSent(t, got, sent, original)
	replays := []string{triage.HeaderReplayID, triage.HeaderReplayItem, triage.HeaderReplayedAt, triage.HeaderAttempts}
	for k := range got.Headers {
		if _, ok := original[k]; !ok && !slices.Contains(replays, k) {
			t.Errorf("the copy carries %s = %#v, which neither the original nor the replay put there", k, got.Headers[k])
		}
	}
}

// readIDs are the ids the read path gives the messages of queue, in order.
func readIDs(t *testing.T, l *broker.Live, queue string) []string {
	t.Helper()
	b, err := l.Browse(context.Background(), queue, triage.BrowseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	envs := make([]triage.Envelope, len(b.Messages))
	for i, m := range b.Messages {
		envs[i] = triage.DecodeEnvelope(m.Body)
	}
	return triage.Identify(b.Messages, envs)
}
