package replay

import (
	"errors"
	"reflect"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// headBodies is a store of whole messages that can read one back without
// its body, as spill.File does.
type headBodies struct {
	msgs  map[int]triage.Message
	heads int // MessageHead calls
	whole int // Message calls
}

func (b *headBodies) Message(pos int) (triage.Message, error) {
	b.whole++
	m, ok := b.msgs[pos]
	if !ok {
		return m, errors.New("no such position")
	}
	return m, nil
}

func (b *headBodies) MessageHead(pos int) (triage.Message, error) {
	b.heads++
	m, ok := b.msgs[pos]
	m.Body = nil
	if !ok {
		return m, errors.New("no such position")
	}
	return m, nil
}

// A plan made over index entries (no body, no headers in memory: what a
// headless replay's read keeps) routes every message where the plan over
// the whole messages does: by the route its entry worked out as it was
// read (from its headers or, where only an envelope states it, its body).
// It reads back only the few the dry run shows, and by their headers the
// first of a destination not met yet and those whose route may pass a
// retry bucket: here none but the samples without --to, one with it.
func TestPlanOverIndexEntriesRoutesAsOverWholeMessages(t *testing.T) {
	when := mustTime("2026-01-02T03:04:05Z")
	msgs := []triage.Message{
		parkedMsg("rejected-1", triage.Headers{
			"x-death": deathList(
				xdeath("orders", "expired", 2, when, "orders.retry", "order.created.retry"),
				xdeath("orders", "rejected", 1, when, "orders", "order.created"),
			),
			"x-first-death-queue": "orders", "x-first-death-reason": "rejected", "x-first-death-exchange": "orders",
		}, `{}`),
		parkedMsg("expired-1", triage.Headers{
			"x-death":             deathList(xdeath("orders", "expired", 1, when, "", "orders")),
			"x-first-death-queue": "orders", "x-first-death-reason": "expired", "x-first-death-exchange": "",
		}, `{}`),
		parkedMsg("published-1", triage.Headers{"x-original-exchange": "ledger", "x-original-routingKey": "entry.posted"}, `{}`),
		parkedMsg("maxlen-1", triage.Headers{"x-death": deathList(xdeath("orders", "maxlen", 1, when, "orders", "order.created"))}, `{}`),
		parkedMsg("published-2", nil, `{"message_id":"published-2","original_exchange":"ledger","original_routing_key":"entry.posted"}`),
		parkedMsg("published-3", nil, `plain text`),
	}
	for i := range msgs {
		msgs[i].Position = i
	}
	whole := replayInspection(msgs...)
	bodies := &headBodies{msgs: map[int]triage.Message{}}
	for _, m := range msgs {
		bodies.msgs[m.Position] = m
	}
	index := triage.NewSpilled(bodies, nil)
	index.UseTopology(whole.Topology)
	indexed := whole
	indexed.Messages = nil
	for _, tr := range whole.Messages {
		e := index.Index(tr)
		if e.Message.Body != nil || !e.Indexed() {
			t.Fatalf("%s: not an index entry", tr.ID)
		}
		indexed.Messages = append(indexed.Messages, e)
	}
	sel := triage.Selection{IDs: []string{"rejected-1", "expired-1", "published-1", "maxlen-1", "published-2", "published-3"}}
	for _, opts := range []Options{{}, {To: &triage.Route{Exchange: "ledger", RoutingKey: "entry.posted"}, Allow: []string{"ledger:*"}}} {
		want, err := NewPlan(whole, sel, opts)
		if err != nil {
			t.Fatal(err)
		}
		bodies.heads, bodies.whole = 0, 0
		got, err := NewPlan(indexed, sel, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Items.Slice(), want.Items.Slice()) || !reflect.DeepEqual(got.Unroutable, want.Unroutable) ||
			!reflect.DeepEqual(got.Destinations, want.Destinations) || got.HoldUpTo != want.HoldUpTo {
			t.Errorf("to %v: over the index\n%+v\nover whole messages\n%+v", opts.To, got, want)
		}
		if len(got.Sample) != sampleSize || got.Sample[0].Payload == "" {
			t.Errorf("to %v: samples %+v, want %d with their payload", opts.To, got.Sample, sampleSize)
		}
		heads := 0
		if opts.To != nil {
			heads = 1 // maxlen-1: its route reaches orders, which dead-letters
		}
		if bodies.whole != sampleSize || bodies.heads != heads {
			t.Errorf("to %v: read %d whole and %d by headers, want %d and %d", opts.To, bodies.whole, bodies.heads, sampleSize, heads)
		}
	}
}
