package broker_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// A replayed copy carries every header with the AMQP field type it was
// delivered with: a Java consumer reading x-retry-count as an Integer must
// not get a Long. The copy's table is compared with reflect.DeepEqual, so
// int8 vs int64 or float32 vs float64 fails it.
func TestReplayKeepsEveryHeaderFieldType(t *testing.T) {
	f := newFixture(t, "replay-types")
	if err := f.ch.ExchangeDeclare("ledger", "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	f.declare("ledger.entries", nil)
	if err := f.ch.QueueBind("ledger.entries", "entry.posted", "ledger", false, nil); err != nil {
		t.Fatal(err)
	}
	f.declare("parked", nil)
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
	sent := amqp.Publishing{
		MessageId: "typed-1", CorrelationId: "c-1", ContentType: "application/json", ContentEncoding: "identity",
		Type: "entry", AppId: "ledger", ReplyTo: "replies", Expiration: "600000", Priority: 3,
		DeliveryMode: amqp.Persistent, Timestamp: ts, Headers: original, Body: []byte(`{"n":1}`),
	}
	f.publishOne("", "parked", sent)

	ctx := context.Background()
	port, err := f.live().OpenReplay(ctx, "rp-types", "parked")
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	held, err := port.Hold(ctx, "parked", []string{"typed-1"}, "rp-types")
	if err != nil || len(held) != 1 {
		t.Fatalf("held %d: %v", len(held), err)
	}
	m := held[0].Message
	m.Headers = replay.CopyHeaders(m, held[0].ID, "rp-types", 1, time.Now())
	pc, err := port.Publish(ctx, replay.Publishing{ItemID: held[0].ID, Route: triage.Route{Exchange: "ledger", RoutingKey: "entry.posted"}, Message: m})
	if err != nil {
		t.Fatal(err)
	}
	if res := pc.Wait(ctx); !res.Confirmed {
		t.Fatalf("not confirmed: %s", res.Why)
	}
	f.waitDepth("ledger.entries", 1)
	copies := f.drain("ledger.entries")
	got := copies[0]
	original["ts"] = time.Unix(ts.Unix(), 0) // amqp091-go decodes timestamps in local time
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
	if got.Headers["dlqt-replay-id"] != "rp-types" {
		t.Errorf("dlqt-replay-id = %#v", got.Headers["dlqt-replay-id"])
	}
	props := func(d amqp.Delivery) []any {
		return []any{d.MessageId, d.CorrelationId, d.ContentType, d.ContentEncoding, d.Type, d.AppId, d.ReplyTo, d.Expiration, d.Priority, d.DeliveryMode, d.Timestamp.UTC(), string(d.Body)}
	}
	want := []any{sent.MessageId, sent.CorrelationId, sent.ContentType, sent.ContentEncoding, sent.Type, sent.AppId, sent.ReplyTo, sent.Expiration, sent.Priority, sent.DeliveryMode, ts, string(sent.Body)}
	if !reflect.DeepEqual(props(got), want) {
		t.Errorf("properties %v, want %v", props(got), want)
	}
}
