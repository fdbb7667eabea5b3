package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// parkAggregates parks one order event per entry of keys, in that order,
// each carrying its aggregate as order_id; it returns their ids.
func (b *replayBed) parkAggregates(keys []string) []string {
	b.t.Helper()
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = fmt.Sprintf("%s-%d", k, i)
		err := b.ch.PublishWithContext(context.Background(), "orders", "order.created", true, false, amqp.Publishing{
			MessageId: ids[i], ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Body: []byte(fmt.Sprintf(`{"message_id":%q,"event_type":"order.created","order_id":%q,"step":%d}`, ids[i], k, i)),
		})
		if err != nil {
			b.t.Fatal(err)
		}
	}
	b.waitDepth(bedOrders, len(keys))
	stop := b.rejectAll(bedOrders)
	b.waitDepth(bedParking, len(keys))
	stop()
	return ids
}

// TestOrderedReplayStopsOnlyTheFailingAggregate: two aggregates of three
// messages each; the consumer takes aggregate A and rejects B's messages.
// A arrives whole and in order; B stops at its first message, which fails
// again, and its two later messages stay parked unpublished.
func TestOrderedReplayStopsOnlyTheFailingAggregate(t *testing.T) {
	b := newReplayBed(t, "replay-ordered")
	ids := b.parkAggregates([]string{"A", "B", "A", "B", "A", "B"})
	ch, err := b.conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume(bedOrders, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var took []string
	go func() {
		for d := range ds {
			if strings.HasPrefix(d.MessageId, "B") {
				d.Nack(false, false) // dead-lettered back to the parking queue
				continue
			}
			mu.Lock()
			took = append(took, d.MessageId)
			mu.Unlock()
			d.Ack(false)
		}
	}()
	res := runDlqt(t, b.env, "replay", bedParking, "--group", "rejected", "--order-by", "order_id", "--in-order", "--observe", "1s", "--rate", "50", "--yes")
	ch.Close()
	if res.code == 0 {
		t.Fatalf("an ordered replay with a stopped aggregate exited 0\nstdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	}
	for _, want := range []string{
		"aggregate A: replayed in order: A-0 -> A-2 -> A-4",
		"aggregate B: stopped at B-1 (failed-again) after 0; still parked: B-3, B-5",
		"1 of 2 aggregate(s) stopped",
	} {
		if !strings.Contains(res.stdout+res.stderr, want) {
			t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", want, res.stdout, res.stderr)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(took, []string{ids[0], ids[2], ids[4]}) {
		t.Errorf("the consumer took %v, want A's three in order", took)
	}
	// The last wave's hold held B-1's copy, B-3 and B-5 and requeued them as
	// dlqt ended; a passive declare right after can still count 0 ready (on
	// 3.10, 9 of 150 reads where the holder's close-ok never came: the
	// requeue lands a moment later). Wait for the three: a real loss still
	// fails here, with the count.
	b.waitDepth(bedParking, 3)
	parked := b.read(bedParking)
	var left []string
	for _, d := range parked {
		left = append(left, d.MessageId)
	}
	slices.Sort(left)
	if !slices.Equal(left, []string{"B-1", "B-3", "B-5"}) {
		t.Errorf("parking holds %v, want B-1 (failed again) and B-3, B-5 never published", left)
	}
	for _, d := range parked {
		if _, copied := d.Headers["dlqt-replay-id"]; copied != (d.MessageId == "B-1") {
			t.Errorf("%s: replay header present=%v; only B-1's copy was published", d.MessageId, copied)
		}
	}
	b.verifyJournal()
}
