package broker_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/views"
)

// loadSmall publishes n small messages (ids m-0000000…) to queue with
// publisher confirms, up to 4,096 unconfirmed at a time.
func loadSmall(t testing.TB, conn *amqp.Connection, queue string, n int) {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	const window = 4096
	ring := make([]*amqp.DeferredConfirmation, 0, window)
	for i := range n {
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", queue, false, false, amqp.Publishing{
			MessageId: fmt.Sprintf("m-%07d", i), ContentType: "application/json", Body: fmt.Appendf(nil, `{"n":%d}`, i),
		})
		if err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		ring = append(ring, dc)
		if len(ring) == window {
			for _, c := range ring[:window/2] {
				if !c.Wait() {
					t.Fatalf("the broker nacked a message before %d", i)
				}
			}
			ring = append(ring[:0], ring[window/2:]...)
		}
	}
	for _, c := range ring {
		if !c.Wait() {
			t.Fatal("the broker nacked one of the last messages")
		}
	}
}

// A read right after a large read: the broker puts the first read's
// 100,000 messages back in steps of about 32,000 (a passive declare counted
// 35,470 ready 73 ms after the first read closed), so a second read
// begun at once used to take the part already back for the whole queue
// ("all 32,140 messages"), or, with the management API's figures of the
// first read, say the rest was "held by another reader" when there was
// none. It waits for them and reads all 100,000, or says the broker was
// still returning them; never "all" over a part.
func TestReadRightAfterALargeReadWaitsForTheBrokerToReturnIt(t *testing.T) {
	const n = 100_000
	f, second, back := rightAfterALargeRead(t, "reread", n)
	all := func(triage.Message) error { return nil }
	var waited, most atomic.Int64
	b, err := second.Browse(context.Background(), "orders.dlq", triage.BrowseOptions{Each: all, Returning: func(n int) {
		waited.Add(1)
		most.Store(max(most.Load(), int64(n)))
	}})
	if err != nil {
		t.Fatal(err)
	}
	bound := views.Bound(b)
	t.Logf("second read: %d messages, %q; %d back as it began; waited for the broker %d times, for up to %d messages",
		b.Read, bound, back, waited.Load(), most.Load())
	switch {
	case b.Read == n && b.HeldElsewhere == 0 && bound == "all 100,000 messages":
	case b.Read < n && strings.HasPrefix(b.Bound, "the broker was still returning") && b.Depth == n &&
		!strings.HasPrefix(bound, "all") && b.HeldElsewhere == 0:
	default:
		t.Errorf("second read: %d of %d messages, %d held elsewhere, %q; want all %d, or a read that says the broker is still returning the rest",
			b.Read, b.Depth, b.HeldElsewhere, bound, n)
	}
	f.waitDepth("orders.dlq", n)
}

// A headless replay takes its queue's lease before it reads its plan, and
// the read took that lease for another actor's hold: begun right after a
// dry run of 1,000,000 it planned the 505,860 the broker had returned, said
// "494,140 of 1,000,000 messages are held by another reader", replayed
// those 505,860 and exited 0. Under the caller's own lease (WithLease) the
// read waits for the broker as any other does.
func TestAReadUnderItsOwnLeaseWaitsForTheBrokerToReturnAnEarlierRead(t *testing.T) {
	const n = 100_000
	f, second, back := rightAfterALargeRead(t, "reread-own-lease", n)
	lease, err := second.TakeLease(context.Background(), "orders.dlq", "replaying")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	ctx := broker.WithLease(context.Background(), lease)
	b, err := second.Browse(ctx, "orders.dlq", triage.BrowseOptions{Each: func(triage.Message) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	bound := views.Bound(b)
	t.Logf("read under its own lease: %d messages, %q; %d back as it began", b.Read, bound, back)
	switch {
	case b.Read == n && b.HeldElsewhere == 0 && bound == "all 100,000 messages":
	case b.Read < n && strings.HasPrefix(b.Bound, "the broker was still returning") && b.HeldElsewhere == 0:
	default:
		t.Errorf("read under its own lease: %d of %d messages, %d held elsewhere, %q; want all %d, or a read that says the broker is still returning the rest",
			b.Read, b.Depth, b.HeldElsewhere, bound, n)
	}
	f.waitDepth("orders.dlq", n)
}

// A discard's hold right after a large read waits for the broker to
// return that read's messages too. Before, it took what was back for the
// whole queue: a discard of a group of 1,000,000 begun as a read of them
// ended held and took 164,756, said "discarded 164756" and exited 0.
func TestDiscardRightAfterALargeReadWaitsForTheBrokerToReturnIt(t *testing.T) {
	const n = 100_000
	f, second, back := rightAfterALargeRead(t, "rediscard", n)
	var seen int
	var waited atomic.Int64
	res, err := second.Sweep(context.Background(), "orders.dlq", triage.BrowseOptions{
		Each:      func(triage.Message) error { seen++; return nil },
		Returning: func(int) { waited.Add(1) },
	}, func([]triage.Message) []int {
		every := make([]int, seen)
		for i := range every {
			every[i] = i
		}
		return every
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("discard: held %d, took %d of %d, %q; %d back as it began; told of the wait %d times",
		res.Held, len(res.Taken), res.Depth, res.Bound, back, waited.Load())
	switch {
	case len(res.Taken) == n && res.Depth == n && res.Bound == "":
		f.waitDepth("orders.dlq", 0)
	case len(res.Taken) < n && strings.HasPrefix(res.Bound, "the broker was still returning") && res.Depth == n:
		f.waitDepth("orders.dlq", n-len(res.Taken))
	default:
		t.Errorf("discard: took %d of %d messages (held %d), bound %q; want all %d, or a hold that says the broker is still returning the rest",
			len(res.Taken), res.Depth, res.Held, res.Bound, n)
	}
}

// rightAfterALargeRead fills orders.dlq in a vhost of its own with n
// small messages, reads them all with one Live and closes it, and returns
// a second Live, dialled before that read began as another process would
// be, and how many messages the queue counted ready the moment the first
// was gone. It fails the test if the broker had returned every message by
// then: the case would not be tested.
func rightAfterALargeRead(t *testing.T, name string, n int) (*fixture, *broker.Live, int) {
	t.Helper()
	f := newFixture(t, name)
	f.fillSmall("orders.dlq", n)
	first := f.live()
	// A separate process: dlqt's own count of what it released is not there.
	second := f.live() // dialled now: the second begins the moment the first is gone
	eventually(t, "the management API counts the queue", func() string {
		// As a parking queue filled a while ago: its figures lag 5 s.
		top, err := second.Topology(context.Background())
		if q, ok := top.Queue("orders.dlq"); err != nil || !ok || q.Messages != n {
			return fmt.Sprintf("%+v, %v", q, err)
		}
		return ""
	})
	b, err := first.Browse(context.Background(), "orders.dlq", triage.BrowseOptions{Each: func(triage.Message) error { return nil }})
	if err != nil || b.Read != n {
		t.Fatalf("first read: %d messages, %v", b.Read, err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	back := f.depth("orders.dlq")
	if back == n {
		t.Fatal("the broker had returned every message before the second began: the test did not catch it returning them")
	}
	return f, second, back
}

// A replay's hold keeps its messages unacked with no consumer left, as the
// broker's requeue of an earlier read does for a while; its lease tells
// the two apart, so a read beside it does not wait for messages that are
// not on their way back, and says they are held.
func TestAReadBesideAReplaysHoldSaysTheyAreHeld(t *testing.T) {
	f := newFixture(t, "reread-lease")
	f.declare("orders.dlq", nil)
	f.publish("orders.dlq", 4, 0)
	reader := f.live()
	if broker.Leased(f.conn, "orders.dlq") {
		t.Fatal("a lease seen where none was taken")
	}
	lease, err := f.live().TakeLease(context.Background(), "orders.dlq", "replaying")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	if !broker.Leased(f.conn, "orders.dlq") {
		t.Fatal("another connection's lease not seen")
	}
	hold, err := f.conn.Channel() // held as a replay holds: got, unacked, no consumer
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	for range 4 {
		if _, ok, err := hold.Get("orders.dlq", false); !ok || err != nil {
			t.Fatalf("get: %v %v", ok, err)
		}
	}
	eventually(t, "the management API counts 4 unacked", func() string {
		top, err := reader.Topology(context.Background())
		if q, ok := top.Queue("orders.dlq"); err != nil || !ok || q.Messages != 4 || q.Unacked != 4 {
			return fmt.Sprintf("%+v, %v", q, err)
		}
		return ""
	})
	b, err := reader.Browse(context.Background(), "orders.dlq", triage.BrowseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := views.Bound(b); b.Count() != 0 || got != "all 0 messages; 4 of 4 messages are held by another reader" {
		t.Errorf("read %d, bound %q", b.Count(), got)
	}
}
