package broker_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
	"github.com/dlqt/dlqt/internal/triage"
)

// scanMessage is message i of a full scan test: every property set, and
// headers of every AMQP type a dead letter carries (x-death's nested
// tables and arrays included).
func scanMessage(i int) amqp.Publishing {
	died := time.Date(2026, 11, 30, 10, 0, i%60, 0, time.UTC)
	return amqp.Publishing{
		MessageId: fmt.Sprintf("scan-%04d", i), CorrelationId: "corr", ContentType: "application/json", ContentEncoding: "identity",
		DeliveryMode: amqp.Persistent, Priority: 3, ReplyTo: "replies", Type: "order.created", AppId: "orders",
		Timestamp: died,
		Headers: amqp.Table{
			"x-death": []any{amqp.Table{"queue": "orders", "reason": "rejected", "count": int64(i + 1), "time": died,
				"exchange": "", "routing-keys": []any{"orders"}}},
			"x-first-death-queue": "orders", "x-first-death-reason": "rejected",
			"int32": int32(i), "int64": int64(-i), "float": 1.5, "bool": true, "bytes": []byte{0, 1, 2, byte(i)},
			"decimal": amqp.Decimal{Scale: 2, Value: 1234}, "nil": nil,
		},
		Body: []byte(fmt.Sprintf(`{"message_id":"scan-%04d","n":%d}`, i, i)),
	}
}

// TestFullScanMovesEachMessageOnceKeepingIt: a full scan with a window
// smaller than the queue visits every message in order, leaves exactly
// the count it found, in the same order, each with its id, properties,
// headers (names, types, values) and body as they were; only the
// redelivered flag resets and the scan's mark is added.
func TestFullScanMovesEachMessageOnceKeepingIt(t *testing.T) {
	const n = 120
	f := newFixture(t, "fullscan")
	f.declare("scan.dlq", nil)
	f.declare("untouched.dlq", nil) // the same messages, as a plain read gives them
	for i := range n {
		f.publishOne("", "scan.dlq", scanMessage(i))
		f.publishOne("", "untouched.dlq", scanMessage(i))
	}
	l := f.live()
	var visited []string
	var progress int
	res, err := l.FullScan(context.Background(), "scan.dlq", broker.FullScanOptions{
		Window:   7, // the copies reach the head of the queue long before the scan ends
		Visit:    func(m triage.Message) error { visited = append(visited, m.Properties.MessageID); return nil },
		Progress: func(done, _ int) { progress = done },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != n || res.Moved != n || progress != n || len(visited) != n {
		t.Fatalf("result %+v, progress %d, visited %d", res, progress, len(visited))
	}
	for i, id := range visited {
		if id != fmt.Sprintf("scan-%04d", i) {
			t.Fatalf("visit %d was %s: not in queue order", i, id)
		}
	}
	f.waitDepth("scan.dlq", n)
	for i := range n {
		d, ok, err := f.ch.Get("scan.dlq", true)
		if err != nil || !ok {
			t.Fatalf("get %d: %v %v", i, ok, err)
		}
		want := scanMessage(i)
		ref, ok, err := f.ch.Get("untouched.dlq", true)
		if err != nil || !ok {
			t.Fatalf("get untouched %d: %v %v", i, ok, err)
		}
		if d.MessageId != want.MessageId {
			t.Fatalf("position %d holds %s, want %s", i, d.MessageId, want.MessageId)
		}
		if d.Headers[broker.ScanHeader] != res.ScanID {
			t.Fatalf("%s is not marked as a copy of scan %s: %v", d.MessageId, res.ScanID, d.Headers[broker.ScanHeader])
		}
		delete(d.Headers, broker.ScanHeader)
		if !reflect.DeepEqual(d.Headers, ref.Headers) { // every other name, AMQP type and value
			t.Fatalf("%s headers changed:\n%#v\nwant\n%#v", d.MessageId, d.Headers, ref.Headers)
		}
		got := []any{d.CorrelationId, d.ContentType, d.ContentEncoding, d.DeliveryMode, d.Priority, d.ReplyTo, d.Type, d.AppId, d.Timestamp.UTC(), string(d.Body), d.Redelivered}
		exp := []any{want.CorrelationId, want.ContentType, want.ContentEncoding, want.DeliveryMode, want.Priority, want.ReplyTo, want.Type, want.AppId, want.Timestamp, string(want.Body), false}
		if !reflect.DeepEqual(got, exp) {
			t.Fatalf("%s properties changed: %v, want %v", d.MessageId, got, exp)
		}
	}
	if d := f.depth("scan.dlq"); d != 0 {
		t.Fatalf("%d messages left past the copies: some were moved twice", d)
	}
}

// TestFullScanStopsWhereTheVisitRefuses: a visit error stops the scan;
// every message is still in the queue, none lost, the refused one not
// moved.
func TestFullScanStopsWhereTheVisitRefuses(t *testing.T) {
	const n = 30
	f := newFixture(t, "fullscan-stop")
	f.declare("stop.dlq", nil)
	for i := range n {
		f.publishOne("", "stop.dlq", scanMessage(i))
	}
	l := f.live()
	seen := 0
	res, err := l.FullScan(context.Background(), "stop.dlq", broker.FullScanOptions{Window: 4, Visit: func(triage.Message) error {
		if seen++; seen == 11 {
			return fmt.Errorf("enough")
		}
		return nil
	}})
	if err == nil || res.Moved != 10 {
		t.Fatalf("moved %d, err %v: want 10 and the visit's error", res.Moved, err)
	}
	f.waitDepth("stop.dlq", n)
	ids := map[string]int{}
	for range n {
		d, ok, err := f.ch.Get("stop.dlq", true)
		if err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
		ids[d.MessageId]++
	}
	if len(ids) != n {
		t.Fatalf("%d distinct ids of %d: %v", len(ids), n, ids)
	}
}

// TestFullScanRefusesAQueueWithAConsumer: the scan needs the queue to
// itself.
func TestFullScanRefusesAQueueWithAConsumer(t *testing.T) {
	f := newFixture(t, "fullscan-busy")
	f.declare("busy.dlq", nil)
	f.publishOne("", "busy.dlq", scanMessage(0))
	f.publishOne("", "busy.dlq", scanMessage(1))
	ch, err := f.conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Consume("busy.dlq", "other", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	_, err = f.live().FullScan(context.Background(), "busy.dlq", broker.FullScanOptions{})
	if err == nil {
		t.Fatal("a full scan ran beside another consumer")
	}
	ch.Close()
	f.waitDepth("busy.dlq", 2)
}

// TestFullScanOfAQuorumQueueMovesEachMessageOnce (issue 23, item 2): with
// no fault at all, a full scan of a quorum queue larger than its window
// leaves exactly the messages it found, each id once. Before the fix the
// deliveries still on their way to the cancelled consumer were dropped by
// the client, the basic.get that followed read copies instead, and the
// queue ended with duplicates (14 of 5,000 on 4.3, 223 on a 3.10 cluster).
func TestFullScanOfAQuorumQueueMovesEachMessageOnce(t *testing.T) {
	brokertest.SkipShort(t)
	f := newFixture(t, "fullscan-quorum")
	checkQuorumFullScan(t, f, 5000)
}

// checkQuorumFullScan fills a quorum queue with n messages, scans it whole
// and checks that it holds each id exactly once, in the order it had.
func checkQuorumFullScan(t *testing.T, f *fixture, n int) {
	t.Helper()
	f.declare("scan.quorum", amqp.Table{"x-queue-type": "quorum"})
	ids := f.publish("scan.quorum", n, 100)
	res, err := f.live().FullScan(context.Background(), "scan.quorum", broker.FullScanOptions{Window: 256})
	if err != nil {
		t.Fatal(err)
	}
	checkHoldsOnce(t, f, "scan.quorum", ids)
	if res.Total != n || res.Moved != n || res.Final != n {
		t.Fatalf("result %+v: want %d found, moved and left", res, n)
	}
}

// checkHoldsOnce drains queue and checks that it held ids, each once and
// in that order.
func checkHoldsOnce(t *testing.T, f *fixture, queue string, ids []string) {
	t.Helper()
	got := f.drain(queue)
	count := map[string]int{}
	twice := 0
	for _, d := range got {
		if count[d.MessageId]++; count[d.MessageId] == 2 {
			twice++
		}
	}
	if len(got) != len(ids) || twice > 0 || len(count) != len(ids) {
		t.Fatalf("the queue held %d messages, %d distinct, %d ids twice; want %d each once", len(got), len(count), twice, len(ids))
	}
	for i, d := range got {
		if d.MessageId != ids[i] {
			t.Fatalf("position %d holds %s, want %s", i, d.MessageId, ids[i])
		}
	}
}

// TestClusterFullScanOfAQuorumQueueMovesEachMessageOnce is item 2 of
// issue 23 on a 3-node cluster, where the deliveries on their way to a
// cancelled consumer were most (223 of 5,000 came back twice).
func TestClusterFullScanOfAQuorumQueueMovesEachMessageOnce(t *testing.T) {
	brokertest.SkipShort(t)
	c := privnode.StartCluster(t, 3)
	cfg := c.NewVhost("fullscan")
	checkQuorumFullScan(t, fixtureOn(t, nodeConfig(c, 0, cfg.Vhost)), 5000)
}
