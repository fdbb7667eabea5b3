package replay

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/time/rate"

	"github.com/dlqt/dlqt/internal/triage"
)

// setRate paces publishing at perSecond from now on. The bucket holds up
// to 50 ms of tokens, so a late timer is caught up without a burst above
// the rate, and starts empty, so a phase never opens with a burst.
func (r *run) setRate(perSecond float64) {
	r.target = perSecond
	burst := r.burst()
	r.lim = rate.NewLimiter(rate.Limit(perSecond), burst)
	r.lim.AllowN(r.clock.Now(), burst)
}

// burst is the bucket's size at the target rate: 50 ms of tokens.
func (r *run) burst() int { return max(1, int(r.target/20)) }

// armPublish sets the timer for the next token, or idles it.
func (r *run) armPublish(t Timer) {
	t.Stop()
	if !r.mayPublish() {
		return
	}
	t.Reset(r.untilToken())
}

func (r *run) mayPublish() bool {
	if r.paused || r.stopped != "" || r.aborted || r.blocked != "" || len(r.queue) == 0 || !r.roomInFlight() {
		return false
	}
	switch r.phase {
	case PhaseCanary:
		return r.canaryLeft > 0
	case PhaseRunning:
		// The bulk publishes while a streamed hold still reads; its
		// sources are acked once the read has ended (flushConfirmed).
		return true
	}
	return false
}

// roomInFlight says whether the in-flight window has room for a batch:
// once it is full, for publishBatch (or all that is left). Each batch is
// one journal write (an fsync) before it is sent; a full window freed one
// confirm at a time sent batches of one, a write per message: 260 msg/s
// where the broker confirmed 1,300 (20,000 messages, journal on a busy
// disk against one in memory). Batches of 64 in a window of 500 still
// cost 1,560 journal writes for 100,000 messages and held the bulk phase
// to 3,300 msg/s; 500 in a window of 2,000 run it at 4,900-5,000 msg/s,
// a Shovel's pace on the same queues (4,700). A window short of a batch is
// full for a rate the broker does not keep up with anyway, so pacing is
// unchanged.
func (r *run) roomInFlight() bool {
	return maxInFlight-r.inFlight >= min(publishBatch, len(r.queue))
}

func (r *run) untilToken() time.Duration {
	missing := 1 - r.lim.TokensAt(r.clock.Now())
	if missing <= 0 {
		return 0
	}
	return time.Duration(missing / float64(r.lim.Limit()) * float64(time.Second))
}

// publishDue publishes every message the bucket has a token for. The ids
// of the batch are journalled (published) before the first is sent: a kill
// after a send and before its answer is journalled leaves them named, and
// a resume says they may be delivered twice. An error is the journal's.
func (r *run) publishDue(ctx context.Context, pend chan<- pending) error {
	batch := r.dueBatch()
	if len(batch) == 0 {
		return nil
	}
	if err := r.journalBatch(batch); err != nil {
		r.queue = append(batch, r.queue...) // never sent: put back untouched
		return err
	}
	for i, id := range batch {
		delete(r.journalled, id)
		m, err := r.port.Load(ctx, id)
		if err != nil { // nothing sent: the source stays held, and goes back
			r.notPublished(ctx, batch[i:], fmt.Errorf("the held message could not be read back: %w", err))
			return nil
		}
		out := m
		out.Headers = CopyHeaders(m, id, r.plan.ID, triage.AttemptsOf(m), r.clock.Now())
		it, _ := r.led.item(id)
		out = it.Revision.apply(out)
		pc, err := r.port.Publish(ctx, Publishing{ItemID: id, Route: it.Route, Message: out})
		if err != nil {
			r.notPublished(ctx, batch[i:], err)
			return nil
		}
		now := r.clock.Now()
		r.published++
		r.notePublish(now)
		if r.phase == PhaseCanary {
			r.canaryLeft--
		} else {
			if r.pacedFrom.IsZero() {
				r.pacedFrom = now
			}
			r.pacedLast, r.pacedCount = now, r.pacedCount+1
		}
		r.inFlight++
		r.flying[id] = true
		pend <- pending{id, pc, now}
	}
	return nil
}

// journalBatch journals as published the ids of batch not journalled yet.
// The canary's are journalled all at once with its first, and the bucket
// starts again after that write: the canary goes out at its own pace, its
// second message never sent at once because the journal took longer than
// a token (then it would leave before the first's answer could stop it).
func (r *run) journalBatch(batch []string) error {
	ids := slices.DeleteFunc(slices.Clone(batch), func(id string) bool { return r.journalled[id] })
	canary := r.phase == PhaseCanary && len(ids) > 0
	switch {
	case canary:
		rest := r.queue[:min(max(r.canaryLeft-len(batch), 0), len(r.queue))]
		ids = append(ids, rest...)
	case r.phase == PhaseRunning && len(ids) > 0:
		ids = append(ids, r.ahead(len(ids))...)
	}
	if len(ids) == 0 {
		return nil
	}
	// While the journal writes (an fsync: tens of milliseconds on a busy
	// disk), up to 100 ms of tokens may gather: the next batch takes them,
	// and dueBatch shrinks the bucket again. A write that takes longer
	// costs the average rate the rest, which the result reports: no
	// second may carry more than the rate and a tenth. A second of tokens,
	// as it was, let a paced phase at 200 msg/s send 291 copies in one
	// second after a slow write in a loaded CI run
	// (TestReplayDeliversExactlyTheParkedIDsAtThePacedRate).
	r.lim.SetBurstAt(r.clock.Now(), max(r.burst(), int(r.target/10)))
	if err := r.record(triage.ActionReplayOutcome, string(OutcomePublished), ids, nil); err != nil {
		return err
	}
	for _, id := range ids {
		r.journalled[id] = true
	}
	if canary {
		r.setRate(r.target)
	}
	return nil
}

// journalAhead is how far ahead of the bucket a paced phase journals its
// ids as published: a write (an fsync) every quarter second at most, not
// one for each 50 ms batch of tokens. At 200 msg/s on a disk shared with
// other tests, the writes of each batch held the paced phase to 139-173
// msg/s in .ci/runs (TestReplayDeliversExactlyTheParkedIDsAtThePacedRate).
// An id journalled and not yet sent when dlqt is killed is named "may be
// delivered twice" on resume, as the canary's rest is: at most this much
// more of them.
const journalAhead = 250 * time.Millisecond

// ahead are the ids to journal with a batch of n: the next ones of the
// queue, so that the write covers journalAhead of tokens (at most a
// publishBatch), skipping those journalled already.
func (r *run) ahead(n int) []string {
	want := min(publishBatch, int(r.target*journalAhead.Seconds())) - n
	if want <= 0 {
		return nil
	}
	var out []string
	for _, id := range r.queue[:min(want, len(r.queue))] {
		if !r.journalled[id] {
			out = append(out, id)
		}
	}
	return out
}

// dueBatch takes off the queue the ids the bucket has tokens for now,
// within the canary and the in-flight bound.
func (r *run) dueBatch() []string {
	if !r.mayPublish() {
		return nil
	}
	limit := min(len(r.queue), maxInFlight-r.inFlight)
	if r.phase == PhaseCanary {
		limit = min(limit, r.canaryLeft)
	}
	now := r.clock.Now()
	n := 0
	for n < limit && r.lim.AllowN(now, 1) {
		n++
	}
	r.lim.SetBurstAt(now, r.burst()) // what a journal write let gather is taken
	batch := slices.Clone(r.queue[:n])
	r.queue = r.queue[n:]
	return batch
}

// notPublished takes back publishes the client could not send (its
// connection or channel is gone, or the broker blocked it past the
// context): the copies never reached the broker, so their sources stay
// held, to be put back untouched (a resume publishes them), and the run
// stops: nothing more can be sent on that channel. A publish cut short by
// an interruption (SIGINT while the broker blocked it) is the abort's.
func (r *run) notPublished(ctx context.Context, ids []string, err error) {
	r.queue = append(slices.Clone(ids), r.queue...)
	if r.stopped == "" && ctx.Err() == nil {
		r.connLost = true
		r.stopped = "publishing failed, the copy was not sent: " + err.Error()
	}
}

func (r *run) notePublish(now time.Time) {
	r.recent = append(r.recent, now)
	r.rollHistory(now)
	r.history[historySlots-1]++
}

// rollHistory shifts the per-second history up to now.
func (r *run) rollHistory(now time.Time) {
	sec := now.Unix()
	if r.historyAt == 0 {
		r.historyAt = sec
	}
	shift := int(min(sec-r.historyAt, historySlots))
	if shift > 0 {
		copy(r.history[:], r.history[shift:])
		clear(r.history[historySlots-shift:])
		r.historyAt = sec
	}
}

// NextRate is the rate after one ramp-up step: double, capped at ceiling.
func NextRate(current, ceiling float64) float64 {
	if current <= 0 {
		return ceiling
	}
	return min(current*2, ceiling)
}
