package broker_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/doctor"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// The tests here run on whichever broker DLQT_TEST_* points at (3.10 by
// default; make test-compat adds 4.0 and 4.3) and assert what that version
// does: none of them skips a version.

func brokerOf(t testing.TB, l *broker.Live) triage.Broker {
	t.Helper()
	top, err := l.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return top.Broker
}

// asksFirst says whether this broker makes a read of queue ask for consent.
func asksFirst(t *testing.T, l *broker.Live, queue string) bool {
	t.Helper()
	top, err := l.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	q, ok := top.Queue(queue)
	if !ok {
		t.Fatalf("no queue %s", queue)
	}
	return triage.DeliveryCostOf(q, top.Broker).AsksFirst()
}

func TestTopologyNamesTheBrokerVersion(t *testing.T) {
	f := newFixture(t, "version")
	b := brokerOf(t, f.live())
	ov, err := f.management().Overview()
	if err != nil {
		t.Fatal(err)
	}
	if !b.Version.Known() || b.Version != triage.ParseBrokerVersion(ov.RabbitMQVersion) {
		t.Fatalf("Topology().Broker = %+v, the overview says %q", b, ov.RabbitMQVersion)
	}
	if b.FreeRequeue != b.Version.AtLeast(4, 3) {
		t.Errorf("%s: FreeRequeue %v (a node of this suite has every feature flag enabled)", b.Version, b.FreeRequeue)
	}
	t.Logf("RabbitMQ %s, free requeue %v", b.Version, b.FreeRequeue)
}

// A quorum parking queue that sets no delivery limit, browsed 25 times.
// 3.x: no limit, nothing asked, nothing lost. 4.0-4.2: the default limit of
// 20 is asked about first, and with consent the broker drops every message
// on the 21st browse. 4.3: nothing asked, the release is free, nothing
// lost, and each message still has its 20 peeks.
func TestBrowseQuorumWithTheDefaultDeliveryLimit(t *testing.T) {
	f := newFixture(t, "qdefault")
	f.declare("pay.parking", amqp.Table{"x-queue-type": "quorum"})
	want := f.publish("pay.parking", 10, 0)
	l := f.live()
	b := brokerOf(t, l)
	v := b.Version
	ctx := context.Background()

	first, err := l.Browse(ctx, "pay.parking", triage.BrowseOptions{})
	var cost *triage.DeliveryCostError
	asks := v.AtLeast(4, 0) && !b.FreeRequeue
	switch {
	case asks && !errors.As(err, &cost):
		t.Fatalf("%s: browse without consent: err = %v, want a DeliveryCostError", v, err)
	case asks && (cost.Limit != 20 || !cost.Default || cost.Depth != 10):
		t.Errorf("%s: cost = %+v, want the default limit 20 over 10 messages", v, cost)
	case asks && !strings.Contains(cost.Error(), "default delivery-limit 20"):
		t.Errorf("%s: %q does not say the limit is the default", v, cost.Error())
	case !asks && err != nil:
		t.Fatalf("%s: browse without consent: %v, want it read (no cost to ask about)", v, err)
	}
	f.waitDepth("pay.parking", 10)

	top, err := l.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := top.Queue("pay.parking")
	dc := triage.DeliveryCostOf(q, top.Broker)
	accept := triage.BrowseOptions{AcceptDeliveryCost: true}
	// Before 4.3 every release counts, limit or none (3.x counts without
	// acting on it); the refused browse read nothing.
	counted := int64(0)
	if !b.FreeRequeue && len(first.Messages) > 0 {
		counted = 1
	}
	for round := range 25 {
		batch, err := l.Browse(ctx, "pay.parking", accept)
		if err != nil {
			t.Fatalf("%s: browse %d: %v", v, round+1, err)
		}
		if asks && round >= 21 { // dropped by the release of browse 21
			if len(batch.Messages) != 0 {
				t.Fatalf("%s: browse %d read %d messages, want none (4.0 drops them after 20 counted reads)", v, round+1, len(batch.Messages))
			}
			continue
		}
		if got := messageIDs(batch.Messages); !slices.Equal(got, want) {
			t.Fatalf("%s: browse %d: ids %v, want %v", v, round+1, got, want)
		}
		for _, m := range batch.Messages {
			if n, _ := m.Headers["x-delivery-count"].(int64); n != counted {
				t.Fatalf("%s: browse %d: x-delivery-count %d, want %d", v, round+1, n, counted)
			}
			n, _ := m.Headers["x-delivery-count"].(int64)
			if b.FreeRequeue && dc.PeeksLeft(int(n)) != 20 {
				t.Fatalf("%s: browse %d: %d peeks left, want all 20", v, round+1, dc.PeeksLeft(int(n)))
			}
		}
		if !b.FreeRequeue {
			counted++
		}
		if asks && round == 20 {
			f.waitDepth("pay.parking", 0)
			continue
		}
		f.waitDepth("pay.parking", 10)
	}
	if asks {
		t.Logf("%s: 10 of 10 dropped after 20 counted browses, as asked about", v)
	} else {
		t.Logf("%s: 10 of 10 kept after 25 browses", v)
	}
}

// A browse cancelled while it holds quorum messages gives them back with
// an explicit requeue, never by closing the channel: on 4.3 the requeue is
// free and the close would count.
func TestBrowseOfQuorumCancelledReleasesWithoutCost(t *testing.T) {
	f := newFixture(t, "qcancel")
	f.declare("q.parking", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int64(10)})
	f.publish("q.parking", 300, 0)
	l := f.live()
	b := brokerOf(t, l)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := l.Browse(ctx, "q.parking", triage.BrowseOptions{AcceptDeliveryCost: true, Progress: func(read, _ int) {
		if read >= 100 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	f.waitDepth("q.parking", 300)
	again, err := l.Browse(context.Background(), "q.parking", triage.BrowseOptions{AcceptDeliveryCost: true})
	if err != nil || len(again.Messages) != 300 {
		t.Fatalf("browse after the cancel: %d messages, %v", len(again.Messages), err)
	}
	for _, m := range again.Messages {
		n, has := m.Headers["x-delivery-count"].(int64)
		// Whatever the cancelled browse held was released by its Nack; the
		// rest was never delivered.
		if b.FreeRequeue && has && n != 0 {
			t.Fatalf("%s: %s has x-delivery-count %d after a cancelled browse, want none (free release)", b.Version, m.Properties.MessageID, n)
		}
		if !b.FreeRequeue && n > 1 {
			t.Fatalf("%s: %s has x-delivery-count %d, want at most 1", b.Version, m.Properties.MessageID, n)
		}
	}
}

// The doctor flags a quorum parking queue with the default delivery limit
// from 4.0 on, and says nothing of it before.
func TestDoctorFlagsTheDefaultDeliveryLimit(t *testing.T) {
	f := newFixture(t, "qdoctor")
	if err := f.ch.ExchangeDeclare("pay.dlx", "fanout", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	f.declare("pay.work", amqp.Table{"x-dead-letter-exchange": "pay.dlx"})
	f.declare("pay.parking", amqp.Table{"x-queue-type": "quorum"})
	if err := f.ch.QueueBind("pay.parking", "", "pay.dlx", false, nil); err != nil {
		t.Fatal(err)
	}
	findings, top, err := doctor.Run(context.Background(), f.live(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var loses *doctor.Finding
	for _, fd := range findings {
		if fd.Kind == doctor.KindParkingLoses && fd.Queue == "pay.parking" {
			loses = &fd
		}
	}
	v := top.Broker.Version
	switch {
	case !v.AtLeast(4, 0) && loses != nil:
		t.Errorf("%s: unexpected finding: %s", v, loses.Detail)
	case v.AtLeast(4, 0) && loses == nil:
		t.Errorf("%s: no parking-loses-messages finding for the default delivery limit: %v", v, findings)
	case loses != nil && !strings.Contains(loses.Detail, "quorum delivery limit 20, RabbitMQ's default"):
		t.Errorf("%s: detail %q", v, loses.Detail)
	case loses != nil:
		t.Logf("%s: %s", v, loses.Detail)
	}
}

// A message dead-lettered from its work queue, replayed, and rejected
// again: its timeline shows both deaths on every version. 3.10 keeps
// counting the republished x-death (one entry, count 2); 4.x ignores it and
// starts again (one new entry), and dlqt-deaths brings the first one back.
func TestTimelineOfAReplayedMessageThatFailedAgain(t *testing.T) {
	f := newFixture(t, "replay-again")
	for _, x := range [][2]string{{"orders", "direct"}, {"orders.dlx", "fanout"}} {
		if err := f.ch.ExchangeDeclare(x[0], x[1], true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	f.declare("orders.work", amqp.Table{"x-dead-letter-exchange": "orders.dlx"})
	f.declare("orders.parked", nil)
	for _, b := range [][3]string{{"orders.work", "order.created", "orders"}, {"orders.parked", "", "orders.dlx"}} {
		if err := f.ch.QueueBind(b[0], b[1], b[2], false, nil); err != nil {
			t.Fatal(err)
		}
	}
	f.publishOne("orders", "order.created", testMessage(1, []byte(`{"order":1}`)))
	f.rejectOne("orders.work")
	f.waitDepth("orders.parked", 1)
	time.Sleep(1100 * time.Millisecond) // the replay a second after the death

	ctx := context.Background()
	live := f.live()
	in, err := triage.Inspect(ctx, live, "orders.parked", triage.BrowseOptions{}, redact.New())
	if err != nil || len(in.Messages) != 1 {
		t.Fatalf("inspect: %d messages, %v", len(in.Messages), err)
	}
	plan, err := replay.NewPlan(in, triage.Selection{IDs: []string{in.Messages[0].ID}},
		replay.Options{AutoRamp: true, Rate: 50, Canary: 1, CanaryRate: 50, Observe: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	port, err := live.OpenReplay(ctx, plan.ID, "orders.parked")
	if err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	res, err := replay.Run(ctx, plan, port, journal.NewRecorder(j, "test", "host"), nil, nil)
	port.Close()
	if err != nil || res.Resolved != 1 {
		t.Fatalf("replay: %+v, %v", res, err)
	}
	f.waitDepth("orders.work", 1)
	f.rejectOne("orders.work") // the consumer fails it again
	f.waitDepth("orders.parked", 1)

	again, err := triage.Inspect(ctx, live, "orders.parked", triage.BrowseOptions{}, redact.New())
	if err != nil || len(again.Messages) != 1 {
		t.Fatalf("inspect after the second death: %d messages, %v", len(again.Messages), err)
	}
	var deaths []triage.Event
	var total int64
	for _, e := range again.Messages[0].Timeline {
		if e.Kind == triage.EventDeath {
			deaths = append(deaths, e)
			total += e.Count
		}
	}
	v := again.Topology.Broker.Version
	if total != 2 {
		t.Fatalf("%s: the timeline counts %d deaths, want 2: %+v", v, total, deaths)
	}
	switch {
	case !v.AtLeast(3, 13) && (len(deaths) != 1 || deaths[0].Count != 2):
		t.Errorf("%s: want one x-death entry counting 2 (the kept copy deduplicated), got %+v", v, deaths)
	case v.AtLeast(4, 0) && (len(deaths) != 2 || !strings.Contains(deaths[0].Detail, "kept by dlqt") || deaths[1].Count != 1):
		t.Errorf("%s: want the kept first death, then the new one, got %+v", v, deaths)
	}
	if again.Messages[0].Attempts < 2 {
		t.Errorf("%s: attempts %d, want at least 2", v, again.Messages[0].Attempts)
	}
	t.Logf("%s: %d death events: %+v", v, len(deaths), deaths)
}

// rejectOne takes the head of queue and rejects it without requeue, as a
// failing consumer does, so the broker dead-letters it.
func (f *fixture) rejectOne(queue string) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, ok, err := f.ch.Get(queue, false)
		if err != nil {
			f.t.Fatal(err)
		}
		if ok {
			if err := d.Reject(false); err != nil {
				f.t.Fatal(err)
			}
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("nothing to reject in %s", queue)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A message dead-lettered into a stream carries its x-death there too
// (4.x; 3.13.3+ by its release notes), and reads as a broker death. On
// 3.10.8 a classic queue's dead letter never reaches a stream at all.
func TestDeadLetterReadFromAStream(t *testing.T) {
	f := newFixture(t, "stream-dlx")
	f.declare("audit.dead", amqp.Table{"x-queue-type": "stream"})
	f.declare("audit.work", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "audit.dead"})
	f.publishOne("", "audit.work", testMessage(1, []byte(`{"n":1}`)))
	f.rejectOne("audit.work")
	l := f.live()
	if v := brokerOf(t, l).Version; !v.AtLeast(3, 11) {
		time.Sleep(3 * time.Second)
		in, err := triage.Inspect(context.Background(), l, "audit.dead", triage.BrowseOptions{}, redact.New())
		if err != nil || len(in.Messages) != 0 {
			t.Fatalf("%s: %d messages in the stream, %v; want none (this version does not dead-letter into streams)", v, len(in.Messages), err)
		}
		return
	}
	var in triage.Inspection
	eventually(t, "the dead letter in the stream", func() string {
		var err error
		in, err = triage.Inspect(context.Background(), l, "audit.dead", triage.BrowseOptions{}, redact.New())
		if err != nil || len(in.Messages) != 1 {
			return fmt.Sprintf("%d messages, %v", len(in.Messages), err)
		}
		return ""
	})
	m := in.Messages[0]
	if len(m.Deaths) != 1 || m.Deaths[0].Queue != "audit.work" || m.Reason != triage.ReasonRejected {
		t.Fatalf("%s: deaths %+v reason %s, want one rejected death from audit.work", in.Topology.Broker.Version, m.Deaths, m.Reason)
	}
	t.Logf("%s: %+v", in.Topology.Broker.Version, m.Timeline)
}

// A replay that holds quorum messages and is closed before it acks them
// gives them back with a requeue, not by closing its connection: on 4.3
// their delivery counts stay untouched.
func TestReplayClosedWhileHoldingQuorumMessagesReleasesThem(t *testing.T) {
	f := newFixture(t, "replay-close")
	f.declare("q.parked", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int64(10)})
	all := f.publish("q.parked", 5, 0)
	l := f.live()
	ctx := context.Background()
	in, err := triage.Inspect(ctx, l, "q.parked", triage.BrowseOptions{AcceptDeliveryCost: true}, redact.New())
	if err != nil || len(in.Messages) != 5 {
		t.Fatalf("inspect: %d, %v", len(in.Messages), err)
	}
	f.waitDepth("q.parked", 5)
	before := map[string]int{}
	for _, m := range in.Messages {
		before[m.Message.Properties.MessageID] = m.DeliveryCount
	}
	port, err := l.OpenReplay(ctx, "rp-close", "q.parked")
	if err != nil {
		t.Fatal(err)
	}
	port.AcceptDeliveryCost = true
	held, err := port.Hold(ctx, "q.parked", []string{in.Messages[1].ID, in.Messages[3].ID}, "rp-close")
	if err != nil || len(held) != 2 {
		t.Fatalf("hold: %d, %v", len(held), err)
	}
	if err := port.Close(); err != nil {
		t.Fatal(err)
	}
	f.waitDepth("q.parked", 5)
	free := brokerOf(t, l).FreeRequeue
	after, err := l.Browse(ctx, "q.parked", triage.BrowseOptions{AcceptDeliveryCost: true})
	// A quorum queue puts a requeued message behind the ready ones: the
	// set is kept, not the order.
	if got := slices.Sorted(slices.Values(messageIDs(after.Messages))); err != nil || !slices.Equal(got, all) {
		t.Fatalf("after the close: %v, %v; want %v", got, err, all)
	}
	for _, m := range after.Messages {
		n, _ := m.Headers["x-delivery-count"].(int64)
		id := m.Properties.MessageID
		// The hold read every message once; where a requeue counts that is
		// one more, where it is free (4.3) none.
		want := int64(before[id])
		if !free {
			want += 2 // the inspect's release and the hold's
		}
		if n != want {
			t.Errorf("%s: %s x-delivery-count %d, want %d", brokerOf(t, l).Version, id, n, want)
		}
	}
}
