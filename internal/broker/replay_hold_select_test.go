package broker_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// A selecting hold holds what its chooser takes, the first message of
// each id, in queue order; a repeated id is read past, and said. Acked, the sources leave the queue; released, the rest is
// back, in its order on a classic queue. A quorum queue's hold reads it
// whole first (its messages may pay a delivery to be held), then holds
// the same.
func TestASelectingHoldHoldsWhatItsChooserTakes(t *testing.T) {
	brokertest.SkipShort(t)
	t.Run("classic", func(t *testing.T) { selectingHoldTakes(t, nil) })
	t.Run("quorum", func(t *testing.T) { selectingHoldTakes(t, amqp.Table{"x-queue-type": "quorum"}) })
}

func selectingHoldTakes(t *testing.T, args amqp.Table) {
	const n = 6000
	f := newFixture(t, "holdselect")
	f.declare("parked", args)
	all := f.publish("parked", n, 256)
	again := testMessage(4, []byte(`{"message_id":"m-00004"}`)) // m-00004 a second time, at the tail
	f.publishOne("", "parked", again)
	all = append(all, again.MessageId)
	f.waitDepth("parked", n+1)
	even := func(m triage.Message, id string) bool {
		k, err := strconv.Atoi(id[2:])
		return err == nil && k%2 == 0 && m.Properties.MessageID == id
	}
	var picked []string
	for i := 0; i < n; i += 2 {
		picked = append(picked, all[i])
	}

	got, acked, notes, _ := holdSelecting(t, f, "rp-holdselect", even, true)
	if !slices.Equal(got, picked) {
		t.Fatalf("held %d ids, not the %d even ones in queue order (first %v)", len(got), len(picked), got[:min(4, len(got))])
	}
	if !slices.ContainsFunc(notes, func(n string) bool {
		return strings.HasPrefix(n, "1 message(s) of parked that the selection takes repeat the id")
	}) {
		t.Errorf("the repeat of m-00004 went unsaid: %q", notes)
	}
	if !slices.Equal(acked, picked) {
		t.Fatalf("acked %d of the %d held", len(acked), len(picked))
	}
	var want []string // the odd ones and the repeat of m-00004
	for i, id := range all {
		if i%2 == 1 || i == n {
			want = append(want, id)
		}
	}
	f.waitDepth("parked", len(want))
	// Taken, not browsed: a browse of a quorum queue on 4.x asks first (its
	// default delivery limit), and the test is over.
	var ids []string
	for _, d := range f.drain("parked") {
		ids = append(ids, d.MessageId)
	}
	if args != nil { // a quorum queue puts what was returned in the order it applies the returns
		slices.Sort(ids)
		slices.Sort(want)
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("after the hold the queue holds %d ids, want the %d not acked", len(ids), len(want))
	}
}

// The sources of a group at the head of its queue are acked in one
// multiple ack: the rest of the queue, read past after them, stays.
func TestASelectingHoldAcksAGroupAtTheHeadAsOne(t *testing.T) {
	brokertest.SkipShort(t)
	const n = 4000
	f := newFixture(t, "holdhead")
	f.declare("parked", nil)
	all := f.publish("parked", n, 256)
	f.waitDepth("parked", n)
	head := func(_ triage.Message, id string) bool { k, _ := strconv.Atoi(id[2:]); return k < n/2 }
	got, acked, _, _ := holdSelecting(t, f, "rp-holdhead", head, false)
	if !slices.Equal(got, all[:n/2]) {
		t.Fatalf("held %d; want the first %d", len(got), n/2)
	}
	if !slices.Equal(acked, got) {
		t.Fatalf("acked %d of the %d held", len(acked), len(got))
	}
	f.waitDepth("parked", n/2)
	if ids, _ := streamedIDs(t, f, "parked", 0); !slices.Equal(ids, all[n/2:]) {
		t.Fatalf("after the hold the queue holds %d ids, want the %d after the group, in order", len(ids), n/2)
	}
}

// Sources acked together that begin with every tag from the oldest
// unsettled up go as one multiple ack for that run, and the others one by
// one: a group at the head of its queue with more of it further on (the
// old code sent every one alone once any lay apart). Nothing the replay
// did not take is acked: the queue keeps exactly the others, in order.
func TestAcksOfARunFromTheOldestGoAsOneAndTheRestAlone(t *testing.T) {
	brokertest.SkipShort(t)
	const n = 2000
	f := newFixture(t, "holdrun")
	f.declare("parked", nil)
	all := f.publish("parked", n, 256)
	f.waitDepth("parked", n)
	take := func(k int) bool { return k < n/4 || k%7 == 0 }
	var want, left []string
	for k, id := range all {
		if take(k) {
			want = append(want, id)
		} else {
			left = append(left, id)
		}
	}
	got, acked, _, frames := holdSelecting(t, f, "rp-holdrun", func(_ triage.Message, id string) bool { k, _ := strconv.Atoi(id[2:]); return take(k) }, false)
	if !slices.Equal(got, want) || !slices.Equal(acked, got) {
		t.Fatalf("held %d and acked %d, want %d", len(got), len(acked), len(want))
	}
	if apart := len(want) - n/4; frames != 1+apart {
		t.Errorf("%d ack frames for a run of %d from the oldest and %d apart, want %d", frames, n/4, apart, 1+apart)
	}
	f.waitDepth("parked", len(left))
	if ids, _ := streamedIDs(t, f, "parked", 0); !slices.Equal(ids, left) {
		t.Fatalf("after the hold the queue holds %d ids, want the %d not taken, in order", len(ids), len(left))
	}
}

// holdSelecting holds parked with choose, acks what it held (the first
// batch while the read goes on, when early, the rest after, in one Ack),
// closes the port, and returns the ids held, the ids acked, the port's
// notes and the Ack frames it sent (a multiple ack as one).
func holdSelecting(t *testing.T, f *fixture, replayID string, choose replay.Chooser, early bool) (got, acked, notes []string, frames int) {
	t.Helper()
	ctx := context.Background()
	port, err := f.live().OpenReplay(ctx, replayID, "parked")
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	port.AcceptDeliveryCost = true // a quorum queue's delivery limit (4.x: 20 by default)
	held, err := port.HoldSelecting(ctx, "parked", choose, replayID)
	if err != nil {
		t.Fatal(err)
	}
	for b := range held {
		if b.Err != nil {
			t.Fatalf("the read ended short: %v", b.Err)
		}
		for _, h := range b.Held {
			if h.Copy || len(h.BodySHA256) != 64 {
				t.Fatalf("held %+v", h)
			}
			got = append(got, h.ID)
		}
		if early && len(acked) == 0 && len(got) > 0 {
			acked = slices.Clone(got)
			if err := port.Ack(ctx, acked); err != nil {
				t.Fatalf("Ack during the read: %v", err)
			}
		}
	}
	rest := got[len(acked):]
	if err := port.Ack(ctx, rest); err != nil {
		t.Fatalf("Ack after the read: %v", err)
	}
	acked = append(acked, rest...)
	frames = port.AckFrames()
	if err := port.Close(); err != nil {
		t.Fatal(err)
	}
	return got, acked, port.Notes(), frames
}
