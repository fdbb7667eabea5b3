package triage

import "context"

// RunReplay carries out a plan: records it, holds the sources through port,
// publishes the canary at CanaryRate, observes for Observe, then waits for
// ReplayRampUp (or, with AutoRamp, goes on at Rate) and publishes the rest
// paced by a token bucket. ctl takes pause, resume, ramp-up and abort at any
// time; progress (may be nil) is called at least every 250 ms from
// RunReplay's goroutine. A threshold (a failed-again copy, a return or nack,
// destination backlog over MaxBacklog) stops it with Result.StoppedBecause
// set and a nil error; errors are for the broker or the journal failing.
// Every item ends with one outcome; unpublished sources are requeued.
func RunReplay(ctx context.Context, plan ReplayPlan, port ReplayPort, rec Recorder, ctl <-chan ReplayCommand, progress func(ReplayProgress)) (ReplayResult, error) {
	panic("not implemented")
}

// NextRate is the rate after one ramp-up step: double, capped at ceiling.
func NextRate(current, ceiling float64) float64 {
	if current <= 0 {
		return ceiling
	}
	return min(current*2, ceiling)
}
