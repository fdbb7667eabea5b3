package triage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

// queueSweeper is an in-memory queue: Sweep hands choose the head, removes
// what it picked and keeps the rest in order, like the broker.
type queueSweeper struct {
	msgs   []Message
	calls  int
	err    error  // returned before choose when set
	before func() // runs when Sweep is entered
	opts   BrowseOptions
	stream bool // hand each held message to opts.Each, keep none
}

func (q *queueSweeper) Sweep(_ context.Context, queue string, opts BrowseOptions, choose func([]Message) []int) (SweepResult, error) {
	q.calls++
	q.opts = opts
	if q.before != nil {
		q.before()
	}
	if q.err != nil {
		return SweepResult{}, q.err
	}
	limit := opts.Limit
	if limit <= 0 || limit > len(q.msgs) {
		limit = len(q.msgs)
	}
	held := slices.Clone(q.msgs[:limit])
	for i := range held {
		held[i].Queue, held[i].Position = queue, i
	}
	if q.stream && opts.Each != nil { // as the broker does: hand on, keep none
		for _, m := range held {
			if err := opts.Each(m); err != nil {
				return SweepResult{}, err
			}
		}
		held = nil
	}
	picks := choose(held)
	slices.Sort(picks)
	var keep []Message
	for i, m := range q.msgs {
		if !slices.Contains(picks, i) {
			keep = append(keep, m)
		}
	}
	q.msgs = keep
	return SweepResult{Held: limit, Taken: picks}, nil
}

func (q *queueSweeper) ids() []string {
	var out []string
	for _, m := range q.msgs {
		out = append(out, m.Properties.MessageID)
	}
	return out
}

type memRecorder struct {
	records []Record
	err     error
}

func (r *memRecorder) Record(rec Record) error {
	if r.err != nil {
		return r.err
	}
	r.records = append(r.records, rec)
	return nil
}

// parked is a message an application published into the parking queue with
// a failure envelope, so its reason is published/code.
func parked(id, code string) Message {
	body := fmt.Sprintf(`{"message_id":%q,"event_type":"order.created","failure":{"reason_code":%q}}`, id, code)
	return Message{Properties: Properties{MessageID: id, ContentType: "application/json"}, Body: []byte(body)}
}

func discardTopology() Topology {
	return Topology{Vhost: "v", Queues: []Queue{
		{Name: "orders.parking", Type: QueueClassic},
		{Name: "pay.parking", Type: QueueQuorum, DeliveryLimit: 5},
	}}
}

func group(s string) *GroupKey {
	k, err := ParseGroupKey(s)
	if err != nil {
		panic(err)
	}
	return &k
}

func TestDiscardGroupTakesExactlyItsMessagesAndJournalsFirst(t *testing.T) {
	q := &queueSweeper{msgs: []Message{
		parked("a", "address_invalid"), parked("b", "timeout"), parked("c", "address_invalid"), parked("d", "timeout"),
	}}
	rec := &memRecorder{}
	q.before = func() {
		if len(rec.records) != 1 || rec.records[0].Details["step"] != "decision" {
			t.Errorf("the broker was touched with %d records journalled, want the decision first", len(rec.records))
		}
	}
	res, err := Discard(context.Background(), q, discardTopology(), rec, DiscardRequest{
		Vhost: "v", Queue: "orders.parking", Reason: "  bad addresses, customer fixed them  ",
		Selection: Selection{Group: group("published/address_invalid")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Discarded, []string{"a", "c"}) || len(res.Missing) != 0 || res.Held != 4 {
		t.Fatalf("result = %+v", res)
	}
	if got := q.ids(); !slices.Equal(got, []string{"b", "d"}) {
		t.Fatalf("left %v, want b d in order", got)
	}
	// A group decision names no ids: the ids it resolved to are journalled
	// before any ack (a kill during the acks must leave them behind).
	if len(rec.records) != 3 {
		t.Fatalf("records = %+v, want decision, selected ids and outcome", rec.records)
	}
	dec, picked, out := rec.records[0], rec.records[1], rec.records[2]
	if picked.Details["step"] != "selected" || !slices.Equal(picked.MessageIDs, []string{"a", "c"}) {
		t.Errorf("selected = %+v", picked)
	}
	if dec.Action != ActionDiscard || dec.Reason != "bad addresses, customer fixed them" || dec.Queue != "orders.parking" || dec.Vhost != "v" ||
		dec.Details["group"] != "published/address_invalid" || len(dec.MessageIDs) != 0 {
		t.Errorf("decision = %+v", dec)
	}
	if out.Action != ActionDiscard || out.Details["step"] != "outcome" || !slices.Equal(out.MessageIDs, []string{"a", "c"}) ||
		out.Details["discarded"] != 2 || out.Details["held"] != 4 || out.Details["missing"] != nil {
		t.Errorf("outcome = %+v", out)
	}
}

func TestDiscardByIDReportsTheMissingOnes(t *testing.T) {
	q := &queueSweeper{msgs: []Message{parked("a", "x"), parked("b", "x"), parked("c", "x")}}
	rec := &memRecorder{}
	res, err := Discard(context.Background(), q, discardTopology(), rec, DiscardRequest{
		Vhost: "v", Queue: "orders.parking", Reason: "dup of INC-42",
		Selection: Selection{IDs: []string{"c", "gone", "a", "c"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Discarded, []string{"a", "c"}) || !slices.Equal(res.Missing, []string{"gone"}) {
		t.Fatalf("result = %+v", res)
	}
	if got := q.ids(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("left %v", got)
	}
	dec, out := rec.records[0], rec.records[1]
	if !slices.Equal(dec.MessageIDs, []string{"c", "gone", "a"}) || dec.Details["count"] != 3 {
		t.Errorf("decision = %+v, want the 3 distinct ids", dec)
	}
	if !slices.Equal(out.MessageIDs, []string{"a", "c"}) || !slices.Equal(out.Details["missing"].([]string), []string{"gone"}) {
		t.Errorf("outcome = %+v", out)
	}
}

// A decision named each message's body by SHA-256: a message held under
// the same id with another body is another message, and stays, named in
// the result and the journal's outcome; the stream sweep sees the same.
func TestDiscardLeavesAMessageWhoseBodyChanged(t *testing.T) {
	for _, stream := range []bool{false, true} {
		a, b := parked("a", "x"), parked("b", "x")
		was := BodySHA256(b.Body)
		b.Body = []byte(`{"message_id":"b","event_type":"order.created","amount":250000}`)
		q := &queueSweeper{msgs: []Message{a, b}, stream: stream}
		rec := &memRecorder{}
		res, err := Discard(context.Background(), q, discardTopology(), rec, DiscardRequest{
			Vhost: "v", Queue: "orders.parking", Reason: "approved", Selection: Selection{IDs: []string{"a", "b"}},
			Bodies: map[string]string{"a": BodySHA256(a.Body), "b": was},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Discarded, []string{"a"}) || len(res.Missing) != 0 || res.Changed["b"] != BodySHA256(b.Body) {
			t.Errorf("stream %v: result = %+v", stream, res)
		}
		if got := q.ids(); !slices.Equal(got, []string{"b"}) {
			t.Errorf("stream %v: left %v, want the changed b", stream, got)
		}
		if out := rec.records[len(rec.records)-1]; out.Details["changed"] == nil {
			t.Errorf("stream %v: outcome = %+v", stream, out)
		}
	}
}

// Identical messages get occurrence ids (#2, #3) in queue order, the same
// ones the read path shows: choosing "dup#2" takes the second copy only.
func TestDiscardPicksADuplicateByItsOccurrenceID(t *testing.T) {
	q := &queueSweeper{msgs: []Message{parked("dup", "x"), parked("other", "x"), parked("dup", "x"), parked("dup", "x")}}
	shown := Analyze(Batch{Queue: "orders.parking", Messages: q.msgs}, discardTopology(), redact.New())
	if shown[2].ID != "dup#2" {
		t.Fatalf("the read path shows %q for the second copy, want dup#2", shown[2].ID)
	}
	res, err := Discard(context.Background(), q, discardTopology(), &memRecorder{}, DiscardRequest{
		Queue: "orders.parking", Reason: "double publish", Selection: Selection{IDs: []string{"dup#2"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Discarded, []string{"dup#2"}) || len(q.msgs) != 3 {
		t.Fatalf("result %+v, %d left", res, len(q.msgs))
	}
	if got := q.ids(); !slices.Equal(got, []string{"dup", "other", "dup"}) {
		t.Fatalf("left %v", got)
	}
}

func TestDiscardRefusesBeforeTouchingAnything(t *testing.T) {
	cases := map[string]DiscardRequest{
		"empty reason":      {Queue: "orders.parking", Reason: "", Selection: Selection{IDs: []string{"a"}}},
		"blank reason":      {Queue: "orders.parking", Reason: " \t\n", Selection: Selection{IDs: []string{"a"}}},
		"no selection":      {Queue: "orders.parking", Reason: "r"},
		"unknown queue":     {Queue: "nope", Reason: "r", Selection: Selection{IDs: []string{"a"}}},
		"quorum no consent": {Queue: "pay.parking", Reason: "r", Selection: Selection{IDs: []string{"a"}}},
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			q := &queueSweeper{msgs: []Message{parked("a", "x")}}
			rec := &memRecorder{}
			_, err := Discard(context.Background(), q, discardTopology(), rec, req)
			if err == nil {
				t.Fatal("accepted")
			}
			if q.calls != 0 || len(rec.records) != 0 || len(q.msgs) != 1 {
				t.Fatalf("refused with %v but swept %d time(s), journalled %d", err, q.calls, len(rec.records))
			}
		})
	}
	_, err := Discard(context.Background(), &queueSweeper{}, discardTopology(), &memRecorder{}, cases["blank reason"])
	if !errors.Is(err, ErrNoReason) {
		t.Errorf("blank reason: %v, want ErrNoReason", err)
	}
	_, err = Discard(context.Background(), &queueSweeper{}, discardTopology(), &memRecorder{}, cases["quorum no consent"])
	var cost *DeliveryCostError
	if !errors.As(err, &cost) || cost.Limit != 5 {
		t.Errorf("quorum: %v, want a DeliveryCostError", err)
	}
}

func TestDiscardQuorumWithConsentPassesItOn(t *testing.T) {
	q := &queueSweeper{msgs: []Message{parked("a", "x"), parked("b", "x")}}
	res, err := Discard(context.Background(), q, discardTopology(), &memRecorder{}, DiscardRequest{
		Queue: "pay.parking", Reason: "r", Selection: Selection{IDs: []string{"b"}},
		Browse: BrowseOptions{AcceptDeliveryCost: true, Limit: 7},
	})
	if err != nil || !slices.Equal(res.Discarded, []string{"b"}) {
		t.Fatalf("%+v, %v", res, err)
	}
	if !q.opts.AcceptDeliveryCost || q.opts.Limit != 7 {
		t.Errorf("sweep got %+v, want the request's browse options", q.opts)
	}
}

func TestDiscardNotJournalledIsNotDone(t *testing.T) {
	q := &queueSweeper{msgs: []Message{parked("a", "x")}}
	_, err := Discard(context.Background(), q, discardTopology(), &memRecorder{err: errors.New("disk full")}, DiscardRequest{
		Queue: "orders.parking", Reason: "r", Selection: Selection{IDs: []string{"a"}},
	})
	if err == nil || q.calls != 0 || len(q.msgs) != 1 {
		t.Fatalf("err %v, swept %d time(s)", err, q.calls)
	}
}

func TestDiscardFailedSweepIsJournalledAndMissesNothing(t *testing.T) {
	q := &queueSweeper{msgs: []Message{parked("a", "x")}, err: errors.New("connection reset")}
	rec := &memRecorder{}
	res, err := Discard(context.Background(), q, discardTopology(), rec, DiscardRequest{
		Queue: "orders.parking", Reason: "r", Selection: Selection{IDs: []string{"a"}},
	})
	if err == nil || len(res.Discarded) != 0 || len(res.Missing) != 0 {
		t.Fatalf("result %+v, err %v", res, err)
	}
	if len(rec.records) != 2 || rec.records[1].Details["error"] != "connection reset" {
		t.Fatalf("records = %+v, want the outcome to carry the error", rec.records)
	}
}
