package broker_test

import (
	"context"
	"slices"
	"testing"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// heldEveryFifth fills queue "parked" of a fixture of its own with n small
// messages and holds every fifth (the second of each five) for a replay:
// the fixture, the port, every id in queue order, and the ids held.
func heldEveryFifth(t *testing.T, name string, n int) (f *fixture, port *broker.Replay, all, picked []string) {
	t.Helper()
	f = newFixture(t, name)
	f.declare("parked", nil)
	all = f.publish("parked", n, 64)
	f.waitDepth("parked", n)
	for i, id := range all {
		if i%5 == 1 {
			picked = append(picked, id)
		}
	}
	ctx := context.Background()
	port, err := f.live().OpenReplay(ctx, "rp-"+name, "parked")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { port.Close() })
	port.HoldLimit = n
	held, err := port.Hold(ctx, "parked", picked, "rp-"+name)
	if err != nil || len(held) != len(picked) {
		t.Fatalf("held %d of %d: %v", len(held), len(picked), err)
	}
	return f, port, all, picked
}

// A replay of one group mixed with others gives the others back as its
// acks pass them, once its hold has read everything: held until the end,
// each ack made a classic queue walk past all of them, and a replay of
// every fifth of 100,000 took 316 s, most of it waiting for the queue to
// apply its acks (by hand, 3.10.8; 28 s now). Before the hold is released
// the queue counts most of the others ready again; after, it holds
// exactly the others, in their order.
func TestAMixedGroupsReplayGivesTheOthersBackAsItsAcksPass(t *testing.T) {
	brokertest.SkipShort(t)
	f, port, all, picked := heldEveryFifth(t, "giveback", 12000)
	others := slices.DeleteFunc(slices.Clone(all), func(id string) bool { _, found := slices.BinarySearch(picked, id); return found })
	ctx := context.Background()
	for i := 0; i < len(picked); i += 100 { // as a run acks, in confirm order
		if err := port.Ack(ctx, picked[i:min(i+100, len(picked))]); err != nil {
			t.Fatalf("Ack: %v", err)
		}
	}
	ready := f.depth("parked")
	t.Logf("%d of the %d others ready again before the hold's release", ready, len(others))
	if ready < len(others)-2048 {
		t.Errorf("%d ready before the release, want the others but the last run (%d)", ready, len(others)-2048)
	}
	if err := port.Finish(ctx, nil); err != nil {
		t.Fatal(err)
	}
	f.waitDepth("parked", len(others))
	if ids, _ := streamedIDs(t, f, "parked", 0); !slices.Equal(ids, others) {
		t.Fatalf("after the replay the queue holds %d ids, not the %d others in order", len(ids), len(others))
	}
}

// While a selected message before them is still held (its copy returned,
// say), nothing is given back: one Nack(multiple) would give it back too,
// and its later settling would name a tag the channel no longer has.
func TestNothingIsGivenBackPastASourceStillHeld(t *testing.T) {
	brokertest.SkipShort(t)
	f, port, all, picked := heldEveryFifth(t, "givebackheld", 12000)
	left := slices.DeleteFunc(slices.Clone(all), func(id string) bool {
		_, found := slices.BinarySearch(picked[1:], id)
		return found
	})
	ctx := context.Background()
	if err := port.Ack(ctx, picked[1:]); err != nil { // the first stays held
		t.Fatalf("Ack: %v", err)
	}
	if ready := f.depth("parked"); ready != 0 {
		t.Errorf("%d ready while the first selected message is still held, want 0", ready)
	}
	if err := port.Requeue(ctx, picked[:1]); err != nil { // the channel is still whole
		t.Fatalf("Requeue of the one still held: %v", err)
	}
	if err := port.Finish(ctx, nil); err != nil {
		t.Fatal(err)
	}
	f.waitDepth("parked", len(left))
	if ids, _ := streamedIDs(t, f, "parked", 0); !slices.Equal(ids, left) {
		t.Fatalf("after the replay the queue holds %d ids, not the %d left in order", len(ids), len(left))
	}
}
