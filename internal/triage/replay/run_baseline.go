package replay

import (
	"math"
	"time"
)

// A destination in trouble dead-letters messages of its own while a replay
// runs, and those are not the replay's doing. So before the canary the run
// counts the dead letters from the destination queues (during the hold,
// then for Options.Baseline more) and judges what comes later against
// that rate: only dead letters above it are collateral, and stop the run.

// minBaselineWindow is the shortest window a rate is taken over: a few
// dead letters during a hold of 200 ms are not a rate of dozens a second.
const minBaselineWindow = time.Second

// baseline is the run's count of the destination's own dead letters.
type baseline struct {
	until    time.Time // end of the baseline window; zero once judged
	counted  int       // dead letters from a destination before the canary
	rate     float64   // counted per second of the window
	upper    float64   // a rate the destination's own surely stays under
	from     time.Time // when publishing began: the rate runs from here
	canaryOK bool      // a resume whose canary had passed goes on at Rate
	over     bool      // collateral above the rate was seen: reported
}

// drainSignals takes every signal already waiting, before anything is
// published: what the watch saw during the hold.
func (r *run) drainSignals() {
	for {
		select {
		case s, ok := <-r.port.Signals():
			if !ok {
				return
			}
			r.signal(s)
		default:
			return
		}
	}
}

// startBaseline counts the destination's own dead letters until
// Options.Baseline has passed since the run began (none without
// destination queues to judge), then opens the canary.
func (r *run) startBaseline(canaryPassed bool) {
	r.drainSignals()
	r.base.canaryOK = canaryPassed
	// The window runs from the start of the run: the watch counted during
	// the hold too, so a hold as long as the baseline leaves nothing to
	// wait for (a hold of 100,000 took 4 to 7 s, then the 5 s default
	// were waited again).
	if until := r.start.Add(r.opts.Baseline); r.opts.Baseline > 0 && len(r.plan.DestinationQueues) > 0 && until.After(r.clock.Now()) {
		r.phase = PhaseBaseline
		r.base.until = until
		return
	}
	r.endBaseline()
}

// endBaseline takes the rate and opens the canary (or, for a resume
// whose canary passed, the paced run).
func (r *run) endBaseline() {
	now := r.clock.Now()
	window := max(now.Sub(r.start), minBaselineWindow).Seconds()
	n := float64(r.base.counted)
	r.base.rate = n / window
	// A few seconds' count is a rough rate: judge against its upper
	// bound (two standard deviations up), or a destination dead-lettering
	// at its usual pace would trip a long run.
	r.base.upper = (n + 2*math.Sqrt(n)) / window
	r.base.from, r.base.until = now, time.Time{}
	if r.base.canaryOK {
		r.afterObservation()
		return
	}
	come := len(r.queue) + r.unheard // a streamed hold's come yet
	if r.plan.Selecting && r.holding != nil {
		come = r.opts.Canary // how many it takes is known once it has read (holdEnded)
	}
	r.canaryLeft = min(r.opts.Canary, come)
	r.setRate(r.opts.CanaryRate)
	r.phase = PhaseCanary
}

// collateralAllowed is how many dead letters from the destination the
// baseline accounts for since publishing began: at its upper rate, the
// expected count plus three standard deviations (dead letters arrive like
// a Poisson process), plus one, so that one coming right at the start is
// not taken for the replay's. A destination that dead-lettered nothing
// before the canary is judged strictly: any dead letter is collateral.
func (r *run) collateralAllowed() int {
	if r.base.counted == 0 || r.base.from.IsZero() {
		return 0
	}
	expected := r.base.upper * r.clock.Now().Sub(r.base.from).Seconds()
	return int(math.Floor(expected+3*math.Sqrt(expected))) + 1
}

// judgeCollateral reports the dead letters from the destination once they
// exceed the baseline: all of them are journaled as collateral from then
// on. Below it they stay a count.
func (r *run) judgeCollateral() {
	if r.base.over || len(r.collateral) <= r.collateralAllowed() {
		return
	}
	r.base.over = true
	r.toCollateral = append(r.toCollateral, r.collateralOrder...)
}
