package replay

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// slowJournal is a journal whose writes of published ids each take took on
// the run's clock (an fsync on a busy disk).
type slowJournal struct {
	journalSpy
	clock *fakeClock
	took  time.Duration
}

func (j *slowJournal) Record(r triage.Record) error {
	if r.Action == triage.ActionReplayOutcome && r.Reason == string(OutcomePublished) {
		j.clock.Advance(j.took)
	}
	return j.journalSpy.Record(r)
}

// runOnClock runs plan through port with journal j on port's fake clock,
// advanced 10 ms at a time.
func runOnClock(t *testing.T, port *fakePort, j triage.Recorder, plan Plan) (Result, error) {
	t.Helper()
	done := make(chan struct{})
	var res Result
	var err error
	go func() {
		defer close(done)
		res, err = Runner{Port: port, Journal: j, Clock: port.clock}.Run(context.Background(), plan, nil)
	}()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case <-done:
			return res, err
		case <-deadline:
			t.Fatal("the replay did not end")
		default:
			port.clock.Advance(10 * time.Millisecond)
			time.Sleep(200 * time.Microsecond) // room for the run to keep up: under -race, 20 µs was not
		}
	}
}

// A paced phase whose journal writes are slow sends no second more than
// the rate and a tenth: the tokens a write lets gather are capped at
// 100 ms. With a second of them, as before, a CI run sent 291 copies in
// one second of a phase paced at 200 msg/s, and this test 240 and 248
// (averaging 190 msg/s). The price is the average: with every write taking
// 400 ms (an extreme fsync), the phase runs at about 50 msg/s, which the
// result reports; a write under 100 ms costs nothing.
func TestASlowJournalDoesNotBurstThePacedPhase(t *testing.T) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprintf("m-%04d", i)
	}
	port := newFakePort()
	port.clock = newFakeClock()
	perSecond := map[int64]int{}
	paced := false
	port.beforePublish = func(id string) {
		if id != ids[0] { // the canary's one
			paced = true
			perSecond[port.clock.Now().Unix()]++
		}
	}
	spy := &slowJournal{clock: port.clock, took: 400 * time.Millisecond}
	plan := fakePlan(Options{Rate: 200, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, ids...)
	res, err := runOnClock(t, port, spy, plan)
	if err != nil || res.Resolved != len(ids) || !paced {
		t.Fatalf("result %+v, %v", res, err)
	}
	var first, last int64
	for sec := range perSecond {
		if first == 0 || sec < first {
			first = sec
		}
		last = max(last, sec)
	}
	for sec := first + 1; sec < last; sec++ { // the first and last seconds are partial
		if perSecond[sec] > 220 {
			t.Errorf("second %d of the paced phase sent %d, want at most 220: %v", sec-first, perSecond[sec], perSecond)
		}
	}
	t.Logf("sent per second %v; paced at %.1f msg/s", perSecond, res.PacedRate())
}

// A paced phase journals its ids a quarter second ahead of the bucket: on
// a disk where each write takes 60 ms it keeps its rate with about four
// writes a second (one for each 50 ms batch of tokens was 84 writes over
// this test's 5 s), and still journals each id as published before it is
// sent.
func TestAPacedPhaseJournalsAheadOfTheBucket(t *testing.T) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprintf("m-%04d", i)
	}
	port := newFakePort()
	port.clock = newFakeClock()
	spy := &slowJournal{clock: port.clock, took: 60 * time.Millisecond}
	var unjournalled []string
	port.beforePublish = func(id string) {
		if !spy.journalledPublished(id) {
			unjournalled = append(unjournalled, id)
		}
	}
	plan := fakePlan(Options{Rate: 200, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, ids...)
	res, err := runOnClock(t, port, spy, plan)
	if err != nil || res.Resolved != len(ids) {
		t.Fatalf("result %+v, %v", res, err)
	}
	if len(unjournalled) > 0 {
		t.Errorf("%d sent before they were journalled as published: %v", len(unjournalled), firstN(unjournalled, 5))
	}
	writes := 0
	for _, r := range spy.records {
		if r.Action == triage.ActionReplayOutcome && r.Reason == string(OutcomePublished) {
			writes++
		}
	}
	if rate := res.PacedRate(); rate < 180 || rate > 220 {
		t.Errorf("paced at %.1f msg/s with 60 ms journal writes, want 180-220 (200 and at most a tenth more)", rate)
	}
	if max := int(res.PacedElapsed.Seconds()*5) + 2; writes > max {
		t.Errorf("%d journal writes of published ids over a paced phase of %v, want at most %d (5 a second)", writes, res.PacedElapsed, max)
	}
	t.Logf("paced at %.1f msg/s, %d writes over %v", res.PacedRate(), writes, res.PacedElapsed)
}

func (j *journalSpy) journalledPublished(id string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, r := range j.records {
		if r.Action == triage.ActionReplayOutcome && r.Reason == string(OutcomePublished) && slices.Contains(r.MessageIDs, id) {
			return true
		}
	}
	return false
}
