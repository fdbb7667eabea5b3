package replay

import (
	"context"
	"time"

	"golang.org/x/time/rate"

	"github.com/dlqt/dlqt/internal/triage"
)

// setRate paces publishing at perSecond from now on. The bucket holds up
// to 50 ms of tokens, so a late timer is caught up without a burst above
// the rate, and starts empty, so a phase never opens with a burst.
func (r *run) setRate(perSecond float64) {
	r.target = perSecond
	burst := max(1, int(perSecond/20))
	r.lim = rate.NewLimiter(rate.Limit(perSecond), burst)
	r.lim.AllowN(r.clock.Now(), burst)
}

// armPublish sets the timer for the next token, or idles it.
func (r *run) armPublish(t Timer) {
	t.Stop()
	if !r.mayPublish() {
		return
	}
	t.Reset(r.untilToken())
}

func (r *run) mayPublish() bool {
	if r.paused || r.stopped != "" || r.aborted || r.blocked != "" || len(r.queue) == 0 || r.inFlight >= maxInFlight {
		return false
	}
	switch r.phase {
	case PhaseCanary:
		return r.canaryLeft > 0
	case PhaseRunning:
		return true
	}
	return false
}

func (r *run) untilToken() time.Duration {
	missing := 1 - r.lim.TokensAt(r.clock.Now())
	if missing <= 0 {
		return 0
	}
	return time.Duration(missing / float64(r.lim.Limit()) * float64(time.Second))
}

// publishDue publishes every message the bucket has a token for.
func (r *run) publishDue(ctx context.Context, pend chan<- pending) {
	for r.mayPublish() && r.lim.AllowN(r.clock.Now(), 1) {
		id := r.queue[0]
		r.queue = r.queue[1:]
		m := r.held[id]
		out := m
		out.Headers = CopyHeaders(m, id, r.plan.ID, triage.AttemptsOf(m), r.clock.Now())
		out = r.items[id].Revision.apply(out)
		pc, err := r.port.Publish(ctx, Publishing{ItemID: id, Route: r.items[id].Route, Message: out})
		if err != nil {
			r.notPublished(ctx, id, err)
			return
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
}

// notPublished takes back a publish the client could not send (its
// connection or channel is gone, or the broker blocked it past the
// context): the copy never reached the broker, so its source stays held,
// to be put back untouched (a resume publishes it), and the run stops:
// nothing more can be sent on that channel. A publish cut short by an
// interruption (SIGINT while the broker blocked it) is the abort's.
func (r *run) notPublished(ctx context.Context, id string, err error) {
	r.queue = append([]string{id}, r.queue...)
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
