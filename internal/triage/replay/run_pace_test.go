package replay

import (
	"context"
	"fmt"
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
	done := make(chan struct{})
	var res Result
	var err error
	go func() {
		defer close(done)
		res, err = Runner{Port: port, Journal: spy, Clock: port.clock}.Run(context.Background(), plan, nil)
	}()
	deadline := time.After(30 * time.Second)
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-deadline:
			t.Fatal("the replay did not end")
		default:
			port.clock.Advance(10 * time.Millisecond)
			time.Sleep(20 * time.Microsecond)
		}
	}
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
