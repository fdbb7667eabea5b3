package broker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

func messageIDs(ms []triage.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Properties.MessageID
	}
	return out
}

func TestBrowseClassicLeavesDepthAndOrderAndSetsRedelivered(t *testing.T) {
	f := newFixture(t, "classic")
	f.declare("orders.dlq", nil)
	want := f.publish("orders.dlq", 20, 0)
	l := f.live()

	var progress [][2]int
	b, err := l.Browse(context.Background(), "orders.dlq", triage.BrowseOptions{
		Progress: func(read, expected int) { progress = append(progress, [2]int{read, expected}) },
	})
	if err != nil {
		t.Fatalf("Browse: %v", err)
	}
	if got := messageIDs(b.Messages); !slices.Equal(got, want) {
		t.Fatalf("ids = %v, want %v", got, want)
	}
	if b.Depth != 20 || b.Limit != triage.DefaultBrowseLimit || b.Vhost != f.cfg.Vhost || b.Queue != "orders.dlq" || b.Truncated() {
		t.Errorf("batch = depth %d limit %d vhost %q queue %q", b.Depth, b.Limit, b.Vhost, b.Queue)
	}
	if b.TakenAt.IsZero() || b.Err != nil {
		t.Errorf("TakenAt %v, Err %v", b.TakenAt, b.Err)
	}
	if last := progress[len(progress)-1]; last != [2]int{20, 20} {
		t.Errorf("last progress = %v, want [20 20]", last)
	}
	m := b.Messages[7]
	if m.Position != 7 || m.Exchange != "" || m.RoutingKey != "orders.dlq" || m.Redelivered {
		t.Errorf("message 7 = position %d exchange %q key %q redelivered %v", m.Position, m.Exchange, m.RoutingKey, m.Redelivered)
	}
	if m.Headers["n"] != int64(7) || m.Headers["source"] != "test" {
		t.Errorf("headers = %#v", m.Headers)
	}
	wantTS := time.Date(2026, 1, 2, 3, 4, 12, 0, time.UTC)
	if !m.Properties.Timestamp.Equal(wantTS) || m.Properties.ContentType != "application/json" || m.Properties.DeliveryMode != 2 {
		t.Errorf("properties = %+v", m.Properties)
	}
	if string(m.Body) != `{"message_id":"m-00007"}` {
		t.Errorf("body = %q", m.Body)
	}

	f.waitDepth("orders.dlq", 20)
	again, err := l.Browse(context.Background(), "orders.dlq", triage.BrowseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := messageIDs(again.Messages); !slices.Equal(got, want) {
		t.Fatalf("second browse ids = %v, want %v", got, want)
	}
	for _, m := range again.Messages {
		if !m.Redelivered {
			t.Fatalf("message %s not marked redelivered after a browse", m.Properties.MessageID)
		}
	}
	f.waitDepth("orders.dlq", 20)
}

func TestBrowseBoundedLeavesTheRestAndRepeats(t *testing.T) {
	f := newFixture(t, "bounded")
	f.declare("big.dlq", nil)
	all := f.publish("big.dlq", 200, 0)
	l := f.live()

	first, err := l.Browse(context.Background(), "big.dlq", triage.BrowseOptions{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Messages) != 50 || first.Depth != 200 || first.Limit != 50 || !first.Truncated() {
		t.Fatalf("read %d of depth %d limit %d", len(first.Messages), first.Depth, first.Limit)
	}
	if got := messageIDs(first.Messages); !slices.Equal(got, all[:50]) {
		t.Fatalf("ids = %v, want the first 50", got)
	}
	f.waitDepth("big.dlq", 200)

	second, err := l.Browse(context.Background(), "big.dlq", triage.BrowseOptions{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if got := messageIDs(second.Messages); !slices.Equal(got, all[:50]) {
		t.Fatalf("second browse ids = %v, want %v", got, all[:50])
	}
	f.waitDepth("big.dlq", 200)
}

func TestBrowseUnknownQueueIsNotFound(t *testing.T) {
	f := newFixture(t, "unknown")
	_, err := f.live().Browse(context.Background(), "no.such.queue", triage.BrowseOptions{})
	if !errors.Is(err, triage.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if want := `queue "no.such.queue" does not exist in vhost "` + f.cfg.Vhost + `"`; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}

func TestBrowseEmptyQueueReadsNothing(t *testing.T) {
	f := newFixture(t, "empty")
	f.declare("empty.dlq", nil)
	b, err := f.live().Browse(context.Background(), "empty.dlq", triage.BrowseOptions{})
	if err != nil || len(b.Messages) != 0 || b.Depth != 0 || b.Truncated() {
		t.Fatalf("batch %d messages depth %d, err %v", len(b.Messages), b.Depth, err)
	}
}

func TestBrowseCancelledMidwayReturnsWhatItReadAndReleasesAll(t *testing.T) {
	f := newFixture(t, "cancel")
	f.declare("slow.dlq", nil)
	all := f.publish("slow.dlq", 500, 0)
	l := f.live()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := l.Browse(ctx, "slow.dlq", triage.BrowseOptions{
		Progress: func(read, _ int) {
			if read >= 100 {
				cancel()
			}
		},
	})
	if !errors.Is(err, context.Canceled) || !errors.Is(b.Err, context.Canceled) {
		t.Fatalf("err = %v, Batch.Err = %v; want context.Canceled in both", err, b.Err)
	}
	n := len(b.Messages)
	if n < 100 || n >= 500 {
		t.Fatalf("read %d messages, want what was read before the cancel (100..499)", n)
	}
	if got := messageIDs(b.Messages); !slices.Equal(got, all[:n]) {
		t.Fatalf("the messages read are not the head of the queue in order")
	}
	f.waitDepth("slow.dlq", 500)
}

func TestBrowseCutByAClosedConnectionReturnsWhatItReadAndRecovers(t *testing.T) {
	f := newFixture(t, "closed")
	f.declare("cut.dlq", nil)
	all := f.publish("cut.dlq", 300, 0)
	l := f.live()
	rh := f.management()

	closed := false
	b, err := l.Browse(context.Background(), "cut.dlq", triage.BrowseOptions{
		Progress: func(read, _ int) {
			if read < 100 || closed {
				return
			}
			closed = true
			// What an operator's force-close or a broker restart looks like.
			// The management API lists a new connection only after its next
			// statistics tick, so wait for it to show up first.
			var name string
			eventually(t, "dlqt's connection listed", func() string {
				conns, err := rh.ListVhostConnections(f.cfg.Vhost)
				for _, c := range conns {
					if c.ClientProperties["connection_name"] == "dlqt browse" {
						name = c.Name
						return ""
					}
				}
				return fmt.Sprintf("not listed (%v)", err)
			})
			if _, err := rh.CloseConnection(name); err != nil {
				t.Errorf("close connection: %v", err)
			}
			// Hold the reader here until the close has reached the client, so
			// the messages still in flight are cut off, as in a real outage.
			eventually(t, "connection closed", func() string {
				conns, _ := rh.ListVhostConnections(f.cfg.Vhost)
				for _, c := range conns {
					if c.ClientProperties["connection_name"] == "dlqt browse" {
						return "still open"
					}
				}
				return ""
			})
			time.Sleep(300 * time.Millisecond)
		},
	})
	if !closed {
		t.Fatal("found no dlqt connection to close")
	}
	if err == nil || b.Err == nil || err != b.Err {
		t.Fatalf("a browse cut short must say so: err %v, Batch.Err %v, read %d", err, b.Err, len(b.Messages))
	}
	t.Logf("cut short: %v", err)
	n := len(b.Messages)
	if n < 100 || n >= 300 {
		t.Fatalf("read %d, want the 100+ read before the connection closed", n)
	}
	if got := messageIDs(b.Messages); !slices.Equal(got, all[:n]) {
		t.Fatal("the messages read are not the head of the queue in order")
	}
	f.waitDepth("cut.dlq", 300)

	again, err := l.Browse(context.Background(), "cut.dlq", triage.BrowseOptions{})
	if err != nil || len(again.Messages) != 300 {
		t.Fatalf("browse after reconnect: %d messages, %v", len(again.Messages), err)
	}
}

func TestBrowseQuorumWithDeliveryLimitNeedsConsent(t *testing.T) {
	f := newFixture(t, "quorum")
	f.declare("payments.dlq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int64(5)})
	want := f.publish("payments.dlq", 3, 0)
	l := f.live()
	free := brokerOf(t, l).FreeRequeue // 4.3: the release does not count

	_, err := l.Browse(context.Background(), "payments.dlq", triage.BrowseOptions{})
	var cost *triage.DeliveryCostError
	switch {
	case free && err != nil:
		t.Fatalf("err = %v, want a free browse", err)
	case !free && !errors.As(err, &cost):
		t.Fatalf("err = %v, want *DeliveryCostError", err)
	case !free && (cost.Queue != "payments.dlq" || cost.Limit != 5 || cost.Depth != 3):
		t.Errorf("cost = %+v", cost)
	}
	f.waitDepth("payments.dlq", 3)

	for round := range 3 {
		b, err := l.Browse(context.Background(), "payments.dlq", triage.BrowseOptions{AcceptDeliveryCost: true})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if got := messageIDs(b.Messages); !slices.Equal(got, want) {
			t.Fatalf("round %d: ids %v, want %v", round, got, want)
		}
		for _, m := range b.Messages {
			// Each browse adds exactly one to the count; the first delivery has none.
			got, has := m.Headers["x-delivery-count"]
			if free {
				if has {
					t.Errorf("round %d: x-delivery-count = %v, want none (free release)", round, got)
				}
				continue
			}
			if round == 0 && has {
				t.Errorf("round 0: x-delivery-count = %v before any return", got)
			}
			if round > 0 && got != int64(round) {
				t.Errorf("round %d: x-delivery-count = %#v, want %d", round, got, round)
			}
		}
		f.waitDepth("payments.dlq", 3)
	}
}

// On 3.10.8 (and 4.0) a message delivered with x-delivery-count equal to the limit is
// dead-lettered by the browse's release: with limit 1, the first browse is
// free of loss, the second moves the message to the dead-letter queue.
func TestBrowseQuorumAtDeliveryLimitDeadLettersOnRelease(t *testing.T) {
	f := newFixture(t, "qlimit")
	f.declare("parked", nil)
	f.declare("fragile.dlq", amqp.Table{
		"x-queue-type": "quorum", "x-delivery-limit": int64(1),
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "parked",
	})
	f.publish("fragile.dlq", 1, 0)
	l := f.live()
	accept := triage.BrowseOptions{AcceptDeliveryCost: true}

	if brokerOf(t, l).FreeRequeue {
		// 4.3: dlqt's release is free, any number of browses keep it; but
		// a consumer whose channel closes on it (a crash) still counts.
		for range 3 {
			b, err := l.Browse(context.Background(), "fragile.dlq", accept)
			if err != nil || len(b.Messages) != 1 || b.Messages[0].Headers["x-delivery-count"] != nil {
				t.Fatalf("browse on 4.3: %d messages, %v", len(b.Messages), err)
			}
			f.waitDepth("fragile.dlq", 1)
		}
		for range 2 {
			ch, err := f.conn.Channel()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok, err := ch.Get("fragile.dlq", false); !ok || err != nil {
				t.Fatalf("get: %v %v", ok, err)
			}
			ch.Close()
		}
	} else {
		b, err := l.Browse(context.Background(), "fragile.dlq", accept)
		if err != nil || len(b.Messages) != 1 {
			t.Fatalf("first browse: %d messages, %v", len(b.Messages), err)
		}
		f.waitDepth("fragile.dlq", 1)
		if f.depth("parked") != 0 {
			t.Fatal("the first browse (count 0 -> 1, limit 1) dead-lettered the message")
		}

		b, err = l.Browse(context.Background(), "fragile.dlq", accept)
		if err != nil || len(b.Messages) != 1 {
			t.Fatalf("second browse: %d messages, %v", len(b.Messages), err)
		}
		if got := b.Messages[0].Headers["x-delivery-count"]; got != int64(1) {
			t.Fatalf("x-delivery-count = %#v, want 1 (= the limit)", got)
		}
	}
	f.waitDepth("parked", 1)
	f.waitDepth("fragile.dlq", 0)

	dead, err := l.Browse(context.Background(), "parked", triage.BrowseOptions{})
	if err != nil || len(dead.Messages) != 1 {
		t.Fatalf("parked: %d messages, %v", len(dead.Messages), err)
	}
	xdeath, _ := dead.Messages[0].Headers["x-death"].([]any)
	if len(xdeath) == 0 {
		t.Fatalf("no x-death in %#v", dead.Messages[0].Headers)
	}
	if d, _ := xdeath[0].(triage.Headers); d["reason"] != "delivery_limit" || d["queue"] != "fragile.dlq" {
		t.Errorf("x-death[0] = %#v, want reason delivery_limit from fragile.dlq", xdeath[0])
	}
}

func TestBrowseQuorumWithoutLimitIsReadLikeClassic(t *testing.T) {
	f := newFixture(t, "quorumfree")
	f.declare("q.dlq", amqp.Table{"x-queue-type": "quorum"})
	want := f.publish("q.dlq", 10, 0)
	l := f.live()
	opts := triage.BrowseOptions{}
	if asksFirst(t, l, "q.dlq") {
		// 4.0-4.2: the default delivery limit asks first (version_test.go).
		var cost *triage.DeliveryCostError
		if _, err := l.Browse(context.Background(), "q.dlq", opts); !errors.As(err, &cost) || !cost.Default {
			t.Fatalf("err = %v, want a DeliveryCostError for the default limit", err)
		}
		opts.AcceptDeliveryCost = true
	}
	b, err := l.Browse(context.Background(), "q.dlq", opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := messageIDs(b.Messages); !slices.Equal(got, want) || b.Depth != 10 {
		t.Fatalf("ids %v depth %d, want %v depth 10", got, b.Depth, want)
	}
	f.waitDepth("q.dlq", 10)
}

func TestBrowseStreamReadsByOffset(t *testing.T) {
	f := newFixture(t, "stream")
	f.declare("audit.stream", amqp.Table{"x-queue-type": "stream"})
	want := f.publish("audit.stream", 30, 0)
	l := f.live()

	for round := range 2 {
		b, err := l.Browse(context.Background(), "audit.stream", triage.BrowseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := messageIDs(b.Messages); !slices.Equal(got, want) {
			t.Fatalf("round %d: ids %v, want %v", round, got, want)
		}
		for _, m := range b.Messages {
			if m.Redelivered {
				t.Fatalf("round %d: a stream read by offset marked %s redelivered", round, m.Properties.MessageID)
			}
		}
		if b.Depth < 30 {
			t.Errorf("round %d: depth %d, want at least the 30 read", round, b.Depth)
		}
	}

	b, err := l.Browse(context.Background(), "audit.stream", triage.BrowseOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := messageIDs(b.Messages); !slices.Equal(got, want[:10]) {
		t.Fatalf("limit 10: ids %v, want %v", got, want[:10])
	}
}
