package replay

import (
	"context"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

type confirmResult struct {
	id  string
	res PublishResult
}

type pending struct {
	id string
	pc PendingConfirm
	at time.Time // when it was published: the confirm timeout runs from here
}

// loop takes events one at a time until the run is finished, then wraps
// up; the confirm waiter and the depth poll talk to it through channels.
func (r *run) loop(ctx context.Context, ctl <-chan Command) error {
	pend, results, stopWaiter := r.startConfirmWaiter(ctx)
	defer stopWaiter()
	depths, stopDepth := r.startDepthPoll(ctx)
	defer stopDepth()
	tick := r.clock.NewTicker(progressEvery)
	defer tick.Stop()
	pub := r.clock.NewTimer(0)
	defer pub.Stop()
	ev := events{done: ctx.Done(), force: forceOf(ctx), ctl: ctl, signals: r.port.Signals(), results: results, depths: depths, publish: pub.C(), tick: tick.C(),
		held: r.holding}
	for !r.finished() {
		if err := r.step(ctx, &ev, pend); err != nil {
			return r.wrapUp(ctx, err, results)
		}
		r.trip()
		r.armPublish(pub)
	}
	return r.wrapUp(ctx, nil, results)
}

// events are what a run waits on; a channel that closed is set nil.
type events struct {
	done    <-chan struct{}
	force   <-chan struct{} // a second interrupt: stop waiting for confirms
	ctl     <-chan Command
	signals <-chan Signal
	results <-chan confirmResult
	depths  <-chan depthReading
	held    <-chan HeldBatch // a streamed hold's reads
	publish <-chan time.Time // the next token is due
	tick    <-chan time.Time // flush, advance the phases, report
}

// step takes one event. An error is the journal's: the run wraps up.
func (r *run) step(ctx context.Context, ev *events, pend chan<- pending) error {
	select {
	case <-ev.done:
		ev.done = nil
		if why, ok := suspends(ctx); ok {
			r.suspended = true // ends resumable: a stop, no finish
			if r.stopped == "" {
				r.stopped = why
			}
			return nil
		}
		r.aborted = true
		return r.record(triage.ActionReplayAbort, "interrupted", nil, nil)
	case <-ev.force:
		ev.force = nil
		r.forced = true
		r.giveUpInFlight(whyForced)
		if !r.aborted {
			r.aborted = true
			return r.record(triage.ActionReplayAbort, "interrupted twice", nil, nil)
		}
	case cmd := <-ev.ctl:
		return r.command(cmd)
	case s, ok := <-ev.signals:
		if !ok {
			ev.signals = nil
			return nil
		}
		r.signal(s)
	case c := <-ev.results:
		r.answered(c)
	case b, ok := <-ev.held:
		if !ok {
			ev.held = nil
			return r.holdEnded(ctx, false)
		}
		r.heldMore(b)
	case d := <-ev.depths:
		r.noteDepth(d)
	case <-ev.publish:
		return r.publishDue(ctx, pend)
	case <-ev.tick:
		if err := r.flush(ctx); err != nil {
			return err
		}
		err := r.advance()
		r.emit()
		return err
	}
	return nil
}

// answered takes the confirm waiter's answer for one publish in flight.
func (r *run) answered(c confirmResult) {
	r.inFlight--
	delete(r.flying, c.id)
	r.settled(c)
}

// depthReading is one poll of the destination depth.
type depthReading struct {
	n   int
	err error
}

// noteDepth keeps the latest destination depth; a failed poll makes it
// unknown and says why on the gauge, rather than showing a stale figure.
func (r *run) noteDepth(d depthReading) {
	if d.err != nil {
		r.depth, r.depthErr = -1, d.err.Error()
		return
	}
	r.depth, r.depthErr = d.n, ""
}

// startConfirmWaiter waits for each publish's confirm in turn (they arrive
// in publish order) and hands the answers back on results. Stop ends it.
func (r *run) startConfirmWaiter(ctx context.Context) (pend chan<- pending, results <-chan confirmResult, stop func()) {
	in := make(chan pending, maxInFlight)
	out := make(chan confirmResult, maxInFlight)
	waitCtx, stopWaiting := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		for p := range in {
			out <- confirmResult{p.id, r.waitConfirm(waitCtx, p)}
		}
	}()
	return in, out, func() {
		close(in)
		stopWaiting()
	}
}

// waitConfirm waits for p's confirm until the confirm timeout, counted on
// the run's clock from the publish; a timeout counts as unconfirmed.
func (r *run) waitConfirm(ctx context.Context, p pending) PublishResult {
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	t := r.clock.NewTimer(p.at.Add(r.opts.ConfirmTimeout).Sub(r.clock.Now()))
	defer t.Stop()
	go func() {
		select {
		case <-t.C():
			cancel()
		case <-c.Done():
		}
	}()
	res := p.pc.Wait(c)
	if !res.Confirmed && c.Err() != nil {
		res.Unknown = true // no answer came: the broker may have the copy
	}
	return res
}

// startDepthPoll polls the destination depth, when the plan reaches any
// queue; a nil channel never delivers.
func (r *run) startDepthPoll(ctx context.Context) (<-chan depthReading, func()) {
	if len(r.plan.DestinationQueues) == 0 {
		return nil, func() {}
	}
	depths := make(chan depthReading, 1)
	depthCtx, stop := context.WithCancel(ctx)
	go r.pollDepth(depthCtx, depths)
	return depths, stop
}

func (r *run) pollDepth(ctx context.Context, out chan<- depthReading) {
	t := r.clock.NewTicker(depthEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			// A wall-clock bound on one management call, not part of the
			// replay's pacing: it stays on real time.
			c, cancel := context.WithTimeout(ctx, depthEvery)
			d, err := r.port.DestinationDepth(c, r.plan.DestinationQueues)
			cancel()
			if ctx.Err() != nil {
				return
			}
			select {
			case out <- depthReading{d, err}:
			default:
			}
		}
	}
}
