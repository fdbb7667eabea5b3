package broker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// browseIDs reads the queue's ids in order with dlqt's own browse (which
// costs a quorum queue one delivery each).
func browseIDs(t *testing.T, l *broker.Live, queue string) []string {
	t.Helper()
	b, err := l.Browse(context.Background(), queue, triage.BrowseOptions{AcceptDeliveryCost: true})
	if err != nil {
		t.Fatalf("browse %s: %v", queue, err)
	}
	return messageIDs(b.Messages)
}

func without(ids []string, positions ...int) []string {
	var out []string
	for i, id := range ids {
		if !slices.Contains(positions, i) {
			out = append(out, id)
		}
	}
	return out
}

func TestSweepAcksExactlyTheChosenAndKeepsTheRestInOrder(t *testing.T) {
	for _, qtype := range []string{triage.QueueClassic, triage.QueueQuorum} {
		t.Run(qtype, func(t *testing.T) {
			f := newFixture(t, "sweep")
			f.declare("orders.dlq", amqp.Table{"x-queue-type": qtype})
			all := f.publish("orders.dlq", 30, 0)
			l := f.live()

			// The first, some in the middle, and the last: the Nack of the
			// rest must not name an acked tag.
			chosen := []int{0, 7, 8, 20, 29}
			var seen []string
			// From 4.0 a quorum queue has a delivery limit even when it sets
			// none: the sweep asks first (see version_test.go).
			opts := triage.BrowseOptions{AcceptDeliveryCost: asksFirst(t, l, "orders.dlq")}
			res, err := l.Sweep(context.Background(), "orders.dlq", opts, func(held []triage.Message) []int {
				seen = messageIDs(held)
				return chosen
			})
			if err != nil {
				t.Fatalf("Sweep: %v", err)
			}
			if !slices.Equal(seen, all) {
				t.Fatalf("choose saw %v, want the queue in order %v", seen, all)
			}
			if res.Held != 30 || !slices.Equal(res.Taken, chosen) {
				t.Fatalf("result = %+v, want held 30 taken %v", res, chosen)
			}
			f.waitDepth("orders.dlq", 25)
			if got, want := browseIDs(t, l, "orders.dlq"), without(all, chosen...); !slices.Equal(got, want) {
				t.Fatalf("left %v, want %v", got, want)
			}
		})
	}
}

func TestSweepChoosingNothingOrEverything(t *testing.T) {
	f := newFixture(t, "sweepall")
	f.declare("a.dlq", nil)
	all := f.publish("a.dlq", 10, 0)
	l := f.live()

	res, err := l.Sweep(context.Background(), "a.dlq", triage.BrowseOptions{}, func([]triage.Message) []int { return nil })
	if err != nil || res.Held != 10 || len(res.Taken) != 0 {
		t.Fatalf("choose nothing: %+v, %v", res, err)
	}
	f.waitDepth("a.dlq", 10)
	if got := browseIDs(t, l, "a.dlq"); !slices.Equal(got, all) {
		t.Fatalf("after choosing nothing: %v, want %v", got, all)
	}

	// Out-of-range and repeated positions never ack anything unchosen.
	res, err = l.Sweep(context.Background(), "a.dlq", triage.BrowseOptions{}, func(held []triage.Message) []int {
		return []int{-1, 3, 3, 10, 99}
	})
	if err != nil || !slices.Equal(res.Taken, []int{3}) {
		t.Fatalf("bad positions: %+v, %v", res, err)
	}
	f.waitDepth("a.dlq", 9)

	res, err = l.Sweep(context.Background(), "a.dlq", triage.BrowseOptions{}, func(held []triage.Message) []int {
		out := make([]int, len(held))
		for i := range held {
			out[i] = i
		}
		return out
	})
	if err != nil || len(res.Taken) != 9 {
		t.Fatalf("choose all: %+v, %v", res, err)
	}
	f.waitDepth("a.dlq", 0)
}

func TestSweepBoundedHoldsOnlyTheHead(t *testing.T) {
	f := newFixture(t, "sweepbound")
	f.declare("big.dlq", nil)
	all := f.publish("big.dlq", 100, 0)
	l := f.live()

	res, err := l.Sweep(context.Background(), "big.dlq", triage.BrowseOptions{Limit: 20}, func(held []triage.Message) []int {
		if len(held) != 20 {
			t.Errorf("held %d, want the bound 20", len(held))
		}
		return []int{19}
	})
	if err != nil || res.Held != 20 || !slices.Equal(res.Taken, []int{19}) {
		t.Fatalf("%+v, %v", res, err)
	}
	f.waitDepth("big.dlq", 99)
	if got, want := browseIDs(t, l, "big.dlq"), without(all, 19); !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
}

func TestSweepCancelledBeforeTheAcksTakesNothing(t *testing.T) {
	f := newFixture(t, "sweepcancel")
	f.declare("slow.dlq", nil)
	all := f.publish("slow.dlq", 300, 0)
	l := f.live()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	called := false
	_, err := l.Sweep(ctx, "slow.dlq", triage.BrowseOptions{Progress: func(read, _ int) {
		if read >= 100 {
			cancel()
		}
	}}, func([]triage.Message) []int { called = true; return []int{0, 1, 2} })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if called {
		t.Error("choose was called on a partial hold")
	}
	f.waitDepth("slow.dlq", 300)
	if got := browseIDs(t, l, "slow.dlq"); !slices.Equal(got, all) {
		t.Fatal("a cancelled sweep changed the queue")
	}
}

func TestSweepQuorumWithDeliveryLimitNeedsConsent(t *testing.T) {
	f := newFixture(t, "sweepcost")
	f.declare("payments.dlq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int64(5)})
	all := f.publish("payments.dlq", 4, 0)
	l := f.live()

	called := false
	if brokerOf(t, l).FreeRequeue {
		// 4.3: the sweep's requeue is free, nothing to ask.
		called = true
	} else {
		_, err := l.Sweep(context.Background(), "payments.dlq", triage.BrowseOptions{}, func([]triage.Message) []int { called = true; return []int{0} })
		var cost *triage.DeliveryCostError
		if !errors.As(err, &cost) || called {
			t.Fatalf("err = %v (choose called %v), want *DeliveryCostError before holding anything", err, called)
		}
	}
	res, err := l.Sweep(context.Background(), "payments.dlq", triage.BrowseOptions{AcceptDeliveryCost: true}, func([]triage.Message) []int { return []int{1} })
	if err != nil || !slices.Equal(res.Taken, []int{1}) {
		t.Fatalf("with consent: %+v, %v", res, err)
	}
	f.waitDepth("payments.dlq", 3)
	if got, want := browseIDs(t, l, "payments.dlq"), without(all, 1); !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
}

func TestSweepRefusesStreamsAndSnapshots(t *testing.T) {
	f := newFixture(t, "sweepstream")
	f.declare("events", amqp.Table{"x-queue-type": "stream"})
	f.publish("events", 3, 0)
	_, err := f.live().Sweep(context.Background(), "events", triage.BrowseOptions{}, func([]triage.Message) []int { return []int{0} })
	if err == nil {
		t.Fatal("a stream was swept")
	}

	var snap *broker.Snapshot
	_, err = snap.Sweep(context.Background(), "orders.dlq", triage.BrowseOptions{}, func([]triage.Message) []int { return []int{0} })
	if !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("snapshot sweep: %v, want ErrReadOnly", err)
	}
}

func TestSweepUnknownQueueIsNotFound(t *testing.T) {
	f := newFixture(t, "sweepunknown")
	_, err := f.live().Sweep(context.Background(), "nope", triage.BrowseOptions{}, func([]triage.Message) []int { return nil })
	if !errors.Is(err, triage.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

type recorded []triage.Record

func (r *recorded) Record(rec triage.Record) error { *r = append(*r, rec); return nil }

// Identical messages without a message_id are told apart the way the read
// path shows them (content hash, then #2, #3): discarding "#2" on the real
// broker takes exactly one copy and leaves the others and their neighbours.
func TestDiscardOnTheBrokerTakesOneOfIdenticalCopies(t *testing.T) {
	f := newFixture(t, "sweepdup")
	f.declare("legacy.parking", nil)
	copyOf := amqp.Publishing{ContentType: "text/plain", Body: []byte("charge 42 EUR"), Headers: amqp.Table{"x-reason-code": "duplicate"}}
	f.publishOne("", "legacy.parking", testMessage(1, []byte("first")))
	for range 3 {
		f.publishOne("", "legacy.parking", copyOf)
	}
	f.publishOne("", "legacy.parking", testMessage(2, []byte("last")))
	l := f.live()
	top, err := l.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Browse(context.Background(), "legacy.parking", triage.BrowseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shown := triage.Analyze(b, top, redact.New())
	second := shown[2].ID
	if shown[1].ID+"#2" != second {
		t.Fatalf("ids shown %v %v, want the copies numbered", shown[1].ID, second)
	}
	f.waitDepth("legacy.parking", 5)

	var rec recorded
	res, err := triage.Discard(context.Background(), l, top, &rec, triage.DiscardRequest{
		Vhost: f.cfg.Vhost, Queue: "legacy.parking", Reason: "charged twice",
		Selection: triage.Selection{IDs: []string{second}},
	})
	if err != nil || !slices.Equal(res.Discarded, []string{second}) || len(res.Missing) != 0 || len(rec) != 2 {
		t.Fatalf("result %+v, %d records, err %v", res, len(rec), err)
	}
	f.waitDepth("legacy.parking", 4)
	after, err := l.Browse(context.Background(), "legacy.parking", triage.BrowseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := triage.Analyze(after, top, redact.New())
	got := []string{ids[0].ID, ids[1].ID, ids[2].ID, ids[3].ID}
	if want := []string{"m-00001", shown[1].ID, second, "m-00002"}; !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v (two copies, renumbered, between the neighbours)", got, want)
	}
}

// A group mixed with others in a classic queue: every fifth of 12,000 is
// chosen, the last message among them, so the sweep gives back the others
// in runs (settleInOrder), each counted ready before its next ack, and the
// last run's Nack names the last message not chosen. What is left is
// exactly the others, in the queue's order. (Its speed is make bench's: bench/replay's
// interleaved discard.)
func TestSweepOfAGroupMixedWithOthersKeepsTheRestInOrder(t *testing.T) {
	const n = 12000
	f := newFixture(t, "sweep-mixed")
	f.fillSmall("orders.dlq", n)
	l := f.live()
	var seen int
	res, err := l.Sweep(context.Background(), "orders.dlq", triage.BrowseOptions{Each: func(triage.Message) error { seen++; return nil }},
		func([]triage.Message) []int {
			var every5th []int
			for i := 4; i < seen; i += 5 {
				every5th = append(every5th, i)
			}
			return every5th
		})
	if err != nil {
		t.Fatal(err)
	}
	if res.Held != n || len(res.Taken) != n/5 {
		t.Fatalf("held %d, took %d; want %d and %d", res.Held, len(res.Taken), n, n/5)
	}
	var want []string
	for i := range n {
		if i%5 != 4 {
			want = append(want, fmt.Sprintf("m-%07d", i))
		}
	}
	f.waitDepth("orders.dlq", len(want))
	b, err := l.Browse(context.Background(), "orders.dlq", triage.BrowseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := messageIDs(b.Messages); !slices.Equal(got, want) {
		first := 0
		for first < min(len(got), len(want)) && got[first] == want[first] {
			first++
		}
		t.Fatalf("left %d messages, want the %d not chosen in order; they differ from position %d", len(got), len(want), first)
	}
}
