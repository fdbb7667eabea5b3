package broker_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// deepTable nests depth tables; amqp091-go refuses to decode more than 32
// levels but encodes any depth, so the fixture can plant one.
func deepTable(depth int) amqp.Table {
	t := amqp.Table{"leaf": "x"}
	for range depth - 1 {
		t = amqp.Table{"n": t}
	}
	return t
}

// wideTable has n entries; amqp091-go decodes at most 8,192.
func wideTable(n int) amqp.Table {
	t := make(amqp.Table, n)
	for i := range n {
		t[fmt.Sprintf("k%05d", i)] = int32(i)
	}
	return t
}

// plantPoison fills queue with 5 normal messages, one whose headers the
// client cannot decode, then 5 more; it returns the readable ids in order.
func plantPoison(f *fixture, queue string, headers, args amqp.Table) []string {
	f.t.Helper()
	f.declare(queue, args)
	var ids []string
	for i := range 11 {
		p := testMessage(i, []byte(fmt.Sprintf(`{"i":%d}`, i)))
		if i == 5 {
			p.MessageId = "poison"
			p.Headers = headers
		} else {
			ids = append(ids, p.MessageId)
		}
		f.publishOne("", queue, p)
	}
	f.waitDepth(queue, 11)
	return ids
}

func browsedIDs(b triage.Batch) []string {
	var ids []string
	for _, m := range b.Messages {
		ids = append(ids, m.Properties.MessageID)
	}
	return ids
}

func TestQuarantineDeepHeaders(t *testing.T) {
	testQuarantine(t, "deep", amqp.Table{"deep": deepTable(40)}, nil, "nested 40 deep")
}

func TestQuarantineHugeTable(t *testing.T) {
	testQuarantine(t, "wide", amqp.Table{"wide": wideTable(8200)}, nil, "8200 entries")
}

// A quorum queue does not keep requeued messages in their places, so a
// position means nothing there: the browse fails naming the cause, the
// quarantine refuses, and nothing is lost.
func TestUnreadableInQuorumQueue(t *testing.T) {
	f := newFixture(t, "quar-quorum")
	ids := plantPoison(f, "parking", amqp.Table{"deep": deepTable(40)}, amqp.Table{"x-queue-type": "quorum"})
	live := f.live()
	ctx := context.Background()
	// Consent: from 4.0 a quorum queue has a delivery limit of 20 by default.
	_, err := live.Browse(ctx, "parking", triage.BrowseOptions{Limit: 100, AcceptDeliveryCost: true})
	if err == nil || !strings.Contains(err.Error(), "cannot decode") {
		t.Fatalf("browse error %v does not name the cause", err)
	}
	if err := live.CanSetAside(ctx, "parking"); err == nil || !strings.Contains(err.Error(), "quorum") {
		t.Fatalf("CanSetAside = %v, want a refusal naming the queue type", err)
	}
	f.waitDepth("parking", 11)
	all, err := live.RawHead(ctx, "parking", 11)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, m := range all {
		seen = append(seen, m.MessageID())
	}
	slices.Sort(seen)
	want := append(slices.Clone(ids), "poison")
	slices.Sort(want)
	if !slices.Equal(seen, want) {
		t.Fatalf("queue holds %v, want %v", seen, want)
	}
}

func testQuarantine(t *testing.T, prefix string, headers, args amqp.Table, why string) {
	f := newFixture(t, "quar-"+prefix)
	ids := plantPoison(f, "parking", headers, args)
	live := f.live()
	ctx := context.Background()

	b, err := live.Browse(ctx, "parking", triage.BrowseOptions{Limit: 100})
	if err != nil {
		t.Fatalf("browse past the unreadable message: %v", err)
	}
	if got := browsedIDs(b); !slices.Equal(got, ids[:5]) {
		t.Fatalf("browse read %v, want the 5 before the unreadable one %v", got, ids[:5])
	}
	u := b.Unreadable
	if u == nil || u.Position != 5 || u.MessageID != "poison" {
		t.Fatalf("unreadable = %+v, want position 5, id poison", u)
	}
	if !contains(u.Reason, why) {
		t.Errorf("reason %q does not say %q", u.Reason, why)
	}
	f.waitDepth("parking", 11)

	raw, err := live.PeekRaw(ctx, "parking", 5)
	if err != nil {
		t.Fatalf("peek: %v", err)
	}
	if raw.MessageID() != "poison" {
		t.Fatalf("peeked %q, want poison", raw.MessageID())
	}
	f.waitDepth("parking", 11)
	got, err := live.RemoveAt(ctx, "parking", 5, raw)
	if err != nil {
		t.Fatalf("remove: %v", err)
	}
	if got.Digest() != raw.Digest() {
		t.Fatal("removed message differs from the one saved")
	}
	f.waitDepth("parking", 10)

	b, err = live.Browse(ctx, "parking", triage.BrowseOptions{Limit: 100})
	if err != nil || b.Unreadable != nil {
		t.Fatalf("re-browse: %v, unreadable %+v", err, b.Unreadable)
	}
	if got := browsedIDs(b); !slices.Equal(got, ids) {
		t.Fatalf("after quarantine the queue holds %v, want %v", got, ids)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// The limits dlqt checks match the client's exactly: 32 levels and 8,192
// entries are read, one more is not.
func TestUnreadableLimitsMatchTheClient(t *testing.T) {
	cases := []struct {
		headers    amqp.Table
		unreadable bool
	}{
		{amqp.Table{"d": deepTable(32)}, false},
		{amqp.Table{"d": deepTable(33)}, true},
		{amqp.Table{"w": wideTable(8192)}, false},
		{amqp.Table{"w": wideTable(8193)}, true},
	}
	for i, c := range cases {
		f := newFixture(t, "quar-limit")
		plantPoison(f, "parking", c.headers, nil)
		b, err := f.live().Browse(context.Background(), "parking", triage.BrowseOptions{Limit: 100})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got := b.Unreadable != nil; got != c.unreadable {
			t.Errorf("case %d: unreadable = %+v, want %v (read %d)", i, b.Unreadable, c.unreadable, len(b.Messages))
		}
	}
}
