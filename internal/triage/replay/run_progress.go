package replay

import (
	"slices"
	"time"
)

// emit reports progress, when anyone listens.
func (r *run) emit() {
	if r.progress != nil {
		r.progress(r.snapshot())
	}
}

func (r *run) snapshot() Progress {
	now := r.clock.Now()
	cut := now.Add(-rateWindow)
	i := 0
	for i < len(r.recent) && r.recent[i].Before(cut) {
		i++
	}
	r.recent = r.recent[i:]
	window := min(rateWindow, now.Sub(r.start))
	achieved := 0.0
	if window > 0 {
		achieved = float64(len(r.recent)) / window.Seconds()
	}
	r.rollHistory(now)
	p := Progress{
		ReplayID: r.plan.ID, Phase: r.phase, TargetRate: r.target, AchievedRate: achieved,
		Total: r.plan.Items.Len(), Published: r.published, Confirmed: r.confirmed, Returned: r.returned,
		FailedAgain: r.failedAgain, Remaining: len(r.queue) + r.unheard, InFlight: r.inFlight,
		DestinationDepth: r.depth, History: slices.Clone(r.history[:]), Blocked: r.blocked,
		StoppedBecause: r.stopped, Elapsed: now.Sub(r.start), DepthError: r.depthErr, Collateral: r.reportedCollateral(),
	}
	switch {
	case r.stopped != "":
		p.Phase = PhaseStopped
	case r.aborted:
		p.Phase = PhaseAborted
	case r.paused:
		p.Phase = PhasePaused
	case r.phase != PhaseHolding && r.finished():
		// Before the hold nothing is queued yet, which looks finished.
		p.Phase = PhaseDone
	}
	switch {
	case r.phase == PhaseObserving:
		p.ObserveLeft = max(0, r.observeEnd.Sub(now))
	case r.tailing() && p.Phase == PhaseRunning:
		p.Phase = PhaseObserving
		p.ObserveLeft = r.tailEnd.Sub(now)
	}
	if p.Remaining > 0 {
		perSec := achieved
		if perSec <= 0 {
			perSec = r.target
		}
		if perSec > 0 {
			p.ETA = time.Duration(float64(p.Remaining) / perSec * float64(time.Second))
		}
	}
	return p
}

// reportedCollateral is how many collateral dead letters the gauge shows:
// none while they stay within the destination's baseline.
func (r *run) reportedCollateral() int {
	if !r.base.over {
		return 0
	}
	return len(r.collateral)
}
