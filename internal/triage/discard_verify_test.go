package triage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// rereadSweeper is a queueSweeper the discard can read again; with
// ackLost its acks never apply (a broker restart before the queue applied
// them brings the messages back).
type rereadSweeper struct {
	queueSweeper
	ackLost bool
	rereads int
}

func (q *rereadSweeper) Sweep(ctx context.Context, queue string, opts BrowseOptions, choose func([]Message) []int) (SweepResult, error) {
	before := slices.Clone(q.msgs)
	res, err := q.queueSweeper.Sweep(ctx, queue, opts, choose)
	if q.ackLost {
		q.msgs = before
	}
	return res, err
}

func (q *rereadSweeper) Browse(_ context.Context, queue string, _ BrowseOptions) (Batch, error) {
	q.rereads++
	return Batch{Queue: queue, Messages: slices.Clone(q.msgs), Depth: len(q.msgs)}, nil
}

func discardGroup(t *testing.T, s Sweeper, rec *memRecorder) (DiscardResult, error) {
	t.Helper()
	return Discard(context.Background(), s, discardTopology(), rec, DiscardRequest{
		Vhost: "v", Queue: "orders.parking", Reason: "bad addresses", Selection: Selection{Group: group("published/address_invalid")},
	})
}

func TestADiscardIsVerifiedByReadingTheQueueAgain(t *testing.T) {
	q := &rereadSweeper{queueSweeper: queueSweeper{msgs: []Message{parked("a", "address_invalid"), parked("b", "timeout"), parked("c", "address_invalid")}}}
	rec := &memRecorder{}
	res, err := discardGroup(t, q, rec)
	if err != nil || !res.Verified || res.Verification != VerifiedGone || q.rereads != 1 {
		t.Fatalf("result %+v, %v, rereads %d", res, err, q.rereads)
	}
	last := rec.records[len(rec.records)-1]
	if last.Details["step"] != "outcome" || last.Details["verification"] != VerifiedGone || last.Details["verified"] != true || !slices.Equal(last.MessageIDs, []string{"a", "c"}) {
		t.Errorf("outcome %+v", last)
	}
}

// Acks the broker never applied: the channel closed cleanly, yet the
// messages are back. The journal must not say discarded (verified).
func TestADiscardWhoseAcksDidNotApplyIsNotVerified(t *testing.T) {
	q := &rereadSweeper{queueSweeper: queueSweeper{msgs: []Message{parked("a", "address_invalid"), parked("b", "timeout"), parked("c", "address_invalid")}}, ackLost: true}
	rec := &memRecorder{}
	res, err := discardGroup(t, q, rec)
	if err != nil || res.Verified || !slices.Equal(res.StillThere, []string{"a", "c"}) || res.Verification != NotVerified+": 2 still in the queue" {
		t.Fatalf("result %+v, %v", res, err)
	}
	last := rec.records[len(rec.records)-1]
	if last.Details["verified"] != false || !slices.Equal(last.Details["still_there"].([]string), []string{"a", "c"}) {
		t.Errorf("last record %+v", last)
	}
}

// killedSweeper calls choose and dies before its first ack, as a kill -9
// during the acks would leave the journal.
type killedSweeper struct{}

func (killedSweeper) Sweep(_ context.Context, _ string, _ BrowseOptions, choose func([]Message) []int) (SweepResult, error) {
	choose([]Message{parked("a", "address_invalid"), parked("b", "timeout"), parked("c", "address_invalid")})
	return SweepResult{Held: 3}, errors.New("killed")
}

func TestAGroupDiscardJournalsItsIDsBeforeAnyAck(t *testing.T) {
	rec := &memRecorder{}
	_, _ = discardGroup(t, killedSweeper{}, rec)
	found := false
	for _, r := range rec.records {
		if r.Details["step"] == "selected" && slices.Equal(r.MessageIDs, []string{"a", "c"}) {
			found = true
		}
	}
	if !found {
		t.Errorf("no record names the ids a group selection resolved to before the acks: %+v", rec.records)
	}
}

// A journal that refuses the selected ids stops the discard before any ack.
func TestADiscardWhoseSelectedIDsAreNotJournalledAcksNothing(t *testing.T) {
	q := &queueSweeper{msgs: []Message{parked("a", "address_invalid"), parked("b", "timeout")}}
	rec := &failAfter{n: 1}
	_, err := Discard(context.Background(), q, discardTopology(), rec, DiscardRequest{
		Vhost: "v", Queue: "orders.parking", Reason: "r", Selection: Selection{Group: group("published/address_invalid")},
	})
	if err == nil || len(q.msgs) != 2 {
		t.Errorf("err %v, queue left %v", err, q.ids())
	}
}

// failAfter takes n records, then refuses every other one.
type failAfter struct {
	n       int
	records []Record
}

func (f *failAfter) Record(r Record) error {
	if len(f.records) >= f.n {
		return errors.New("disk full")
	}
	f.records = append(f.records, r)
	return nil
}

// Identical copies renumber once one is gone ("#3" becomes "#2"): the
// verification counts them by their shared identity instead of by name.
func TestVerifyingADiscardOfOneIdenticalCopy(t *testing.T) {
	copyOf := Message{Properties: Properties{ContentType: "text/plain"}, Body: []byte("charge 42 EUR")}
	for _, lost := range []bool{false, true} {
		q := &rereadSweeper{queueSweeper: queueSweeper{msgs: []Message{parked("a", "x"), copyOf, copyOf, copyOf}}, ackLost: lost}
		shown := Identify(q.msgs, make([]Envelope, len(q.msgs)))
		res, err := Discard(context.Background(), q, discardTopology(), &memRecorder{}, DiscardRequest{
			Vhost: "v", Queue: "orders.parking", Reason: "charged twice", Selection: Selection{IDs: []string{shown[2]}},
		})
		if err != nil || res.Verified == lost || (lost && !slices.Equal(res.StillThere, []string{shown[2]})) || (!lost && len(res.StillThere) != 0) {
			t.Errorf("acks lost %v: result %+v, %v", lost, res, err)
		}
	}
}

// depthSweeper is a queueSweeper with an ack barrier: it reports the depth
// a sweep began with and, once the acks are applied, what is left (all of
// it when the acks were lost).
type depthSweeper struct {
	queueSweeper
	ackLost bool
	before  int
}

func (q *depthSweeper) Sweep(ctx context.Context, queue string, opts BrowseOptions, choose func([]Message) []int) (SweepResult, error) {
	q.before = len(q.msgs)
	res, err := q.queueSweeper.Sweep(ctx, queue, opts, choose)
	res.Depth = q.before
	return res, err
}

func (q *depthSweeper) SettledDepth(context.Context, string) (int, error) {
	if q.ackLost {
		return q.before, nil
	}
	return len(q.msgs), nil
}

// More than 1,000 discarded are verified by count once the acks are
// applied, not read again.
func TestALargeDiscardIsVerifiedByDepth(t *testing.T) {
	for _, lost := range []bool{false, true} {
		q := &depthSweeper{ackLost: lost}
		for i := range 1200 {
			code := "address_invalid"
			if i%12 == 0 {
				code = "timeout"
			}
			q.msgs = append(q.msgs, parked(fmt.Sprintf("m-%04d", i), code))
		}
		res, err := discardGroup(t, q, &memRecorder{})
		if err != nil || len(res.Discarded) != 1100 || res.Verified == lost {
			t.Errorf("acks lost %v: %d discarded, verified %v (%s), %v", lost, len(res.Discarded), res.Verified, res.Verification, err)
		}
		if !lost && !strings.Contains(res.Verification, "by depth: 1200 before, 100 after") {
			t.Errorf("verification %q", res.Verification)
		}
	}
}

// settlingSweeper is a depthSweeper on a broker that writes acks down on
// its own schedule: with backAfterSettle, the depth read after the settle
// delay shows the discarded messages back (a crash before the acks were
// written), as a kill -9 brought 5,000 of 5,000 back.
type settlingSweeper struct {
	depthSweeper
	backAfterSettle bool
	reads           int
}

func (q *settlingSweeper) AckSettle() time.Duration { return time.Millisecond }

func (q *settlingSweeper) SettledDepth(ctx context.Context, queue string) (int, error) {
	q.reads++
	if q.reads > 1 && q.backAfterSettle {
		return q.before, nil
	}
	return q.depthSweeper.SettledDepth(ctx, queue)
}

// A discard is called verified only once the broker's settle delay has
// passed and the depth read again still shows the messages gone; the
// outcome says what a crash before then would have undone.
func TestADiscardIsVerifiedOnlyAfterTheAcksHadTimeToBeWritten(t *testing.T) {
	for _, back := range []bool{false, true} {
		q := &settlingSweeper{backAfterSettle: back}
		for i := range 1200 {
			q.msgs = append(q.msgs, parked(fmt.Sprintf("m-%04d", i), "address_invalid"))
		}
		rec := &memRecorder{}
		res, err := discardGroup(t, q, rec)
		if err != nil || len(res.Discarded) != 1200 || q.reads != 2 || res.Verified == back {
			t.Errorf("back after the settle %v: %d discarded, %d depth reads, verified %v (%s), %v", back, len(res.Discarded), q.reads, res.Verified, res.Verification, err)
		}
		if !back && !strings.Contains(res.Verification, "A node crash before that would have brought them back") {
			t.Errorf("the outcome does not say what a crash could undo: %s", res.Verification)
		}
		if last := rec.records[len(rec.records)-1]; last.Details["verified"] != res.Verified || last.Details["verification"] != res.Verification {
			t.Errorf("journaled %v / %v", last.Details["verified"], last.Details["verification"])
		}
	}
}
