package broker

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Every field type amqp091-go decodes comes back from a held record as the
// same Go type with the same value, nested tables and arrays included: the
// replay republishes them as delivered.
func TestHeldRecordKeepsEveryFieldType(t *testing.T) {
	d := amqp.Delivery{
		Exchange: "ex", RoutingKey: "rk", ContentType: "application/json", ContentEncoding: "gzip",
		CorrelationId: "c", ReplyTo: "r", Expiration: "60000", MessageId: "m", Type: "t", UserId: "u", AppId: "a",
		Redelivered: true, DeliveryMode: 2, Priority: 9, Timestamp: time.Unix(1700000000, 0),
		Headers: amqp.Table{
			"t": true, "f": false, "i8": int8(-8), "u8": uint8(200), "i16": int16(-300), "u16": uint16(60000),
			"i32": int32(-70000), "u32": uint32(4000000000), "i64": int64(-1 << 40), "f32": float32(1.5), "f64": 2.25,
			"dec": amqp.Decimal{Scale: 2, Value: -12345}, "s": "text", "b": []byte{0, 1, 2}, "ts": time.Unix(1600000000, 0),
			"nil": nil, "x-death": []any{amqp.Table{"count": int64(3), "queues": []any{"q1"}, "time": time.Unix(1, 0)}},
			"empty": amqp.Table{}, "none": []any{},
		},
		Body: []byte(`{"k":"v"}`),
	}
	rec, err := appendDelivery(nil, d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readDelivery(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("read back\n%#v\nwant\n%#v", got, d)
	}
	for n := range rec { // a record cut anywhere is an error, never a panic
		if _, err := readDelivery(rec[:n]); err == nil {
			t.Fatalf("a record cut at %d of %d bytes read without an error", n, len(rec))
		}
	}
}

// Whatever bytes a held record holds, reading it ends with a delivery or an
// error, never a panic or an allocation past the record's size.
func FuzzReadHeldRecord(f *testing.F) {
	rec, _ := appendDelivery(nil, amqp.Delivery{MessageId: "m", Headers: amqp.Table{"a": []any{amqp.Table{"b": int8(1)}}}, Body: []byte("x")})
	f.Add(rec)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := readDelivery(b)
		if err != nil {
			return
		}
		again, err := appendDelivery(nil, d)
		if err != nil {
			t.Fatalf("a record read back cannot be written again: %v", err)
		}
		// fmt prints maps sorted and NaN as NaN, where DeepEqual tells a NaN
		// from itself.
		if d2, err := readDelivery(again); err != nil || fmt.Sprint(d2) != fmt.Sprint(d) {
			t.Fatalf("round trip changed the delivery: %v", err)
		}
	})
}
