package replay

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// signal takes one report of the port: a failed-again copy, a block or
// unblock, a lost connection.
func (r *run) signal(s Signal) {
	switch s.Kind {
	case SignalFailedAgain:
		if _, ours := r.led.item(s.ID); !ours || r.led.is(s.ID, OutcomeFailedAgain) {
			return
		}
		r.failedAgain++
		r.led.settle(s.ID, OutcomeFailedAgain)
		r.why[s.ID] = s.Reason
		r.toFail = append(r.toFail, s.ID)
	case SignalBlocked:
		r.blocked = s.Reason
		if r.blocked == "" {
			r.blocked = "blocked"
		}
	case SignalUnblocked:
		r.blocked = ""
	case SignalLost:
		r.connLost = true
		if r.stopped == "" {
			r.stopped = "lost the broker connection: " + s.Reason
		}
	case SignalDeadLetter:
		r.deadLetter(s)
	}
}

// deadLetter counts a message that is not one of the replay's but was
// dead-lettered from one of its destination queues: before the canary it
// is the destination's own baseline; after, the replay may have pushed it
// out (a full bounded queue drops its head), which judgeCollateral decides
// against the baseline.
func (r *run) deadLetter(s Signal) {
	if _, ours := r.led.item(s.ID); ours || !slices.Contains(r.plan.DestinationQueues, s.Queue) {
		return
	}
	if r.base.from.IsZero() { // holding or counting the baseline
		r.base.counted++
		return
	}
	if _, seen := r.collateral[s.ID]; seen {
		return
	}
	r.collateral[s.ID] = s.Queue
	r.collateralOrder = append(r.collateralOrder, s.ID)
	if r.base.over {
		r.toCollateral = append(r.toCollateral, s.ID)
	}
}

func (r *run) command(c Command) error {
	switch c {
	case Pause:
		if r.paused || r.ended() {
			return nil
		}
		r.paused = true
		return r.record(triage.ActionReplayPause, "", nil, map[string]any{"published": r.published})
	case Resume:
		if !r.paused || r.ended() {
			return nil
		}
		r.paused = false
		r.setRate(r.target) // a paused bucket must not have saved up a burst
		return r.record(triage.ActionReplayResume, "", nil, map[string]any{"published": r.published})
	case RampUp:
		return r.rampUp()
	case Abort:
		if r.ended() {
			return nil
		}
		r.aborted = true
		return r.record(triage.ActionReplayAbort, "by the operator", nil, map[string]any{"published": r.published})
	}
	return nil
}

func (r *run) ended() bool { return r.aborted || r.stopped != "" }

// rampUp leaves the wait after the canary at twice the canary rate, and
// doubles a running rate, never above the ceiling.
func (r *run) rampUp() error {
	switch {
	case r.ended():
		return nil
	case r.phase == PhaseAwaitingRamp:
		r.phase = PhaseRunning
		r.setRate(NextRate(r.opts.CanaryRate, r.opts.Rate))
	case r.phase == PhaseRunning && r.target < r.opts.Rate:
		r.setRate(NextRate(r.target, r.opts.Rate))
	default:
		return nil
	}
	return r.record(triage.ActionReplayRamp, "", nil, map[string]any{"rate": r.target, "canary_passed": true})
}

// advance moves the phases on with time: the canary, once all sent and
// answered, opens the observation window; a clean window ends it. An error
// is the journal's.
func (r *run) advance() error {
	if r.ended() {
		return nil
	}
	switch r.phase {
	case PhaseBaseline:
		if !r.clock.Now().Before(r.base.until) {
			r.endBaseline()
		}
	case PhaseCanary:
		if r.canaryLeft == 0 && r.inFlight == 0 && len(r.toConfirm) == 0 {
			r.phase = PhaseObserving
			r.observeEnd = r.clock.Now().Add(r.opts.Observe)
		}
	case PhaseRunning:
		// The last copies get a short watch too, so one that fails right
		// away is reported failed-again rather than resolved.
		if len(r.queue) == 0 && r.holding == nil && r.inFlight == 0 && r.pacedCount > 0 && r.tailEnd.IsZero() {
			r.tailEnd = r.clock.Now().Add(r.tailWatch())
		}
	case PhaseObserving:
		if !r.clock.Now().Before(r.observeEnd) {
			r.afterObservation()
			if r.phase == PhaseRunning {
				return r.record(triage.ActionReplayRamp, "", nil, map[string]any{"rate": r.target, "canary_passed": true, "auto": true})
			}
		}
	}
	return nil
}

// tailWatch is how long the last copies are watched: Observe, at most
// maxTail; nothing when the port sees no copy fail again and no backlog
// limit is set, since a return or nack comes before its confirm.
func (r *run) tailWatch() time.Duration {
	if b, ok := r.port.(Blind); ok && b.Blind() && r.opts.MaxBacklog == 0 {
		return 0
	}
	return min(r.opts.Observe, maxTail)
}

func (r *run) afterObservation() {
	if r.opts.AutoRamp {
		r.phase = PhaseRunning
		r.setRate(r.opts.Rate)
		return
	}
	r.phase = PhaseAwaitingRamp
	r.setRate(r.opts.CanaryRate)
}

// trip stops the replay when a threshold is crossed.
func (r *run) trip() {
	if r.ended() {
		return
	}
	r.judgeCollateral()
	if r.failedAgain == 0 && r.returned == 0 && !r.base.over && r.opts.MaxBacklog == 0 {
		return
	}
	if why := Threshold(r.opts, r.tally()); why != "" {
		r.stopped = why
	}
}

// Tally is what thresholds are decided on.
type Tally struct {
	FailedAgain, Returned int
	FailedIDs             []string
	ReturnWhy             string
	// Collateral are messages not replayed but dead-lettered from a
	// destination queue meanwhile, by id -> the queue they died in;
	// CollateralAllowed of them the destination's own rate before the
	// replay (BaselineRate a second) accounts for.
	Collateral        map[string]string
	CollateralAllowed int
	BaselineRate      float64
	DestinationDepth  int // -1 unknown
	BaseDepth         int // depth when the replay started; -1 unknown
}

func (r *run) tally() Tally {
	t := Tally{FailedAgain: r.failedAgain, Returned: r.returned, DestinationDepth: r.depth, BaseDepth: r.baseDepth,
		Collateral: r.collateral, CollateralAllowed: r.collateralAllowed(), BaselineRate: r.base.rate}
	for _, id := range r.plan.IDs() {
		switch o, _ := r.led.outcome(id); o {
		case OutcomeFailedAgain:
			t.FailedIDs = append(t.FailedIDs, id)
		case OutcomeReturned:
			if t.ReturnWhy == "" {
				t.ReturnWhy = r.why[id]
			}
		}
	}
	return t
}

// Threshold says why a replay must stop, or "": any message failed
// again, any return or nack, or the destination depth grown by more than
// MaxBacklog since the start.
func Threshold(opts Options, t Tally) string {
	switch {
	case t.FailedAgain > 0:
		return fmt.Sprintf("%d replayed message(s) failed again and are back in a parking queue (%s)", t.FailedAgain, joinFirst(t.FailedIDs, 5))
	case len(t.Collateral) > t.CollateralAllowed:
		ids := make([]string, 0, len(t.Collateral))
		queues := map[string]bool{}
		for id, q := range t.Collateral {
			ids = append(ids, id)
			queues[q] = true
		}
		sort.Strings(ids)
		names := make([]string, 0, len(queues))
		for q := range queues {
			names = append(names, q)
		}
		sort.Strings(names)
		above := ""
		if t.BaselineRate > 0 {
			above = fmt.Sprintf(", more than the %d its rate of %.2f/s before the replay accounts for", t.CollateralAllowed, t.BaselineRate)
		}
		return fmt.Sprintf("%d message(s) that were not replayed were dead-lettered from destination %s into a parking queue meanwhile (%s%s): the replay is pushing others out, e.g. of a full bounded queue",
			len(ids), joinFirst(names, 3), joinFirst(ids, 5), above)
	case t.Returned > 0:
		return fmt.Sprintf("the broker did not take %d message(s) (%s); they stay in the parking queue", t.Returned, t.ReturnWhy)
	case opts.MaxBacklog > 0 && t.DestinationDepth >= 0 && t.BaseDepth >= 0 && t.DestinationDepth-t.BaseDepth > opts.MaxBacklog:
		return fmt.Sprintf("the destination backlog grew by %d messages (limit %d): its consumers are not keeping up", t.DestinationDepth-t.BaseDepth, opts.MaxBacklog)
	}
	return ""
}

func joinFirst(ids []string, n int) string {
	out := ""
	for i, s := range firstN(ids, n) {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}
