package broker_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
)

func TestTableToHeadersWidensEveryAMQPType(t *testing.T) {
	ts := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600))
	got := broker.TableToHeaders(amqp.Table{
		"i8": int8(-8), "i16": int16(-16), "i32": int32(-32), "i64": int64(-64),
		"u8": uint8(8), "u16": uint16(16), "u32": uint32(32),
		"f32": float32(1.5), "f64": 2.25, "dec": amqp.Decimal{Scale: 2, Value: 1250},
		"s": "text", "b": true, "nil": nil, "ts": ts, "raw": []byte{0, 1, 0xff},
		"list":   []any{int32(1), "two", amqp.Table{"three": int16(3)}},
		"nested": amqp.Table{"deeper": amqp.Table{"n": uint8(1)}},
	})
	want := triage.Headers{
		"i8": int64(-8), "i16": int64(-16), "i32": int64(-32), "i64": int64(-64),
		"u8": int64(8), "u16": int64(16), "u32": int64(32),
		"f32": 1.5, "f64": 2.25, "dec": 12.5,
		"s": "text", "b": true, "nil": nil, "ts": ts.UTC(), "raw": []byte{0, 1, 0xff},
		"list":   []any{int64(1), "two", triage.Headers{"three": int64(3)}},
		"nested": triage.Headers{"deeper": triage.Headers{"n": int64(1)}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
	}
}

// sampleHeaders holds one value of every type triage.Headers allows, shaped
// like a real dead letter's headers.
func sampleHeaders() triage.Headers {
	died := time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC)
	return triage.Headers{
		"x-death": []any{triage.Headers{
			"count": int64(3), "reason": "rejected", "queue": "orders.work", "time": died,
			"exchange": "orders", "routing-keys": []any{"order.created"},
		}},
		"x-first-death-queue": "orders.work",
		"x-retry-count":       int64(9007199254740993), // beyond float64's exact integers
		"score":               0.75,
		"whole-float":         float64(3),
		"flag":                false,
		"signature":           []byte{0xde, 0xad, 0xbe, 0xef},
		"empty":               nil,
		"ctx":                 triage.Headers{"tenant": "acme", "ids": []any{int64(1), int64(2)}},
	}
}

func TestHeadersToTableRoundTrips(t *testing.T) {
	h := sampleHeaders()
	table := broker.HeadersToTable(h)
	if err := table.Validate(); err != nil {
		t.Fatalf("not a publishable table: %v", err)
	}
	if got := broker.TableToHeaders(table); !reflect.DeepEqual(got, h) {
		t.Fatalf("got  %#v\nwant %#v", got, h)
	}
}

// The round trip that matters: republish with converted headers, browse it
// back, and every value keeps its type and value.
func TestHeadersSurviveARepublishThroughTheBroker(t *testing.T) {
	f := newFixture(t, "headers")
	f.declare("replayed", nil)
	h := sampleHeaders()
	f.publishOne("", "replayed", amqp.Publishing{MessageId: "r-1", Headers: broker.HeadersToTable(h), Body: []byte("{}")})
	b, err := f.live().Browse(context.Background(), "replayed", triage.BrowseOptions{})
	if err != nil || len(b.Messages) != 1 {
		t.Fatalf("browse: %d messages, %v", len(b.Messages), err)
	}
	if got := b.Messages[0].Headers; !reflect.DeepEqual(got, h) {
		t.Fatalf("got  %#v\nwant %#v", got, h)
	}
}
