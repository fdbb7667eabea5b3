package broker_test

import (
	"context"
	"slices"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// A streamed browse reads through several consumers (window.go). A quorum
// queue gives a Nack(multiple, requeue) back consumer by consumer, so
// consumers whose deliveries interleaved would leave the queue in another
// order than the read saw, and a replay's hold, bounded at the plan's last
// chosen position, would miss a chosen message
// (TestReplayKilledMidCanaryLosesNoMessageItDidNotSelect).
func TestAStreamedBrowseOfAQuorumQueueKeepsItsOrder(t *testing.T) {
	for _, args := range []struct {
		name string
		args amqp.Table
	}{
		{"classic", nil},
		{"quorum", amqp.Table{"x-queue-type": "quorum"}},
	} {
		t.Run(args.name, func(t *testing.T) {
			f := newFixture(t, "order-"+args.name)
			f.declare("q.dlq", args.args)
			const n = 3000
			want := f.publish("q.dlq", n, 200)
			l := f.live()
			opts := triage.BrowseOptions{AcceptDeliveryCost: true, MemoryBudget: 256 << 10} // windows of ~150 messages
			for round := range 3 {
				var got []string
				opts.Each = func(m triage.Message) error {
					got = append(got, m.Properties.MessageID)
					return nil
				}
				if _, err := l.Browse(context.Background(), "q.dlq", opts); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					i := 0
					for i < min(len(got), len(want)) && got[i] == want[i] {
						i++
					}
					var runs []string
					for j := 0; j < len(got); {
						k := j
						for k+1 < len(got) && got[k+1] > got[k] {
							k++
						}
						runs = append(runs, got[j]+".."+got[k])
						j = k + 1
					}
					t.Logf("runs: %v", runs)
					t.Fatalf("read %d: %d ids, first difference at %d (got %v, want %v)", round, len(got), i,
						got[i:min(i+5, len(got))], want[i:min(i+5, len(want))])
				}
				f.waitDepth("q.dlq", n)
			}
		})
	}
}

// A sweep that takes some messages of a quorum queue gives the rest back
// in their order too (window.requeue, with the acked tags left out).
func TestASweepOfAQuorumQueueLeavesTheRestInOrder(t *testing.T) {
	f := newFixture(t, "order-sweep")
	f.declare("q.dlq", amqp.Table{"x-queue-type": "quorum"})
	const n = 3000
	all := f.publish("q.dlq", n, 200)
	l := f.live()
	opts := triage.BrowseOptions{AcceptDeliveryCost: true, MemoryBudget: 256 << 10}
	var want []string
	i := 0
	opts.Each = func(m triage.Message) error { i++; return nil }
	res, err := l.Sweep(context.Background(), "q.dlq", opts, func([]triage.Message) []int {
		var picks []int
		for p := range i {
			if p%7 == 3 {
				picks = append(picks, p)
			}
		}
		return picks
	})
	if err != nil {
		t.Fatal(err)
	}
	for p, id := range all {
		if p%7 != 3 {
			want = append(want, id)
		}
	}
	if len(res.Taken) != n-len(want) {
		t.Fatalf("took %d, want %d", len(res.Taken), n-len(want))
	}
	f.waitDepth("q.dlq", len(want))
	var got []string
	opts.Each = func(m triage.Message) error { got = append(got, m.Properties.MessageID); return nil }
	if _, err := l.Browse(context.Background(), "q.dlq", opts); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		j := 0
		for j < min(len(got), len(want)) && got[j] == want[j] {
			j++
		}
		t.Fatalf("after the sweep: %d ids, first difference at %d (got %v, want %v)", len(got), j,
			got[j:min(j+5, len(got))], want[j:min(j+5, len(want))])
	}
}
