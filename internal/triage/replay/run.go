package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/time/rate"

	"github.com/dlqt/dlqt/internal/triage"
)

// Timings of a running replay.
const (
	progressEvery = 250 * time.Millisecond // gauge refresh and outcome flush
	depthEvery    = time.Second            // destination depth poll
	maxInFlight   = 500                    // publishes awaiting their confirm
	rateWindow    = 2 * time.Second        // achieved rate is measured over this
	historySlots  = 60                     // seconds of sparkline
	maxTail       = 5 * time.Second        // watch after the last publish, at most
)

// Run carries out a plan: records it, holds the sources through port,
// publishes the canary at CanaryRate, observes for Observe, then waits for
// RampUp (or, with AutoRamp, goes on at Rate), publishes the rest
// paced by a token bucket, and watches the last copies for up to 5 s (never
// longer than Observe) before it reports. ctl takes pause, resume, ramp-up
// and abort at any time; progress (may be nil) is called at least every 250 ms from
// Run's goroutine. A threshold (a failed-again copy, a return or nack,
// destination backlog over MaxBacklog, a lost connection) stops it with
// Result.StoppedBecause set and a nil error; an error means the journal
// failed (the replay stops rather than act unrecorded) or the sources could
// not be held. A cancelled ctx aborts like Abort. Every item ends with
// one outcome; unpublished sources are requeued.
func Run(ctx context.Context, plan Plan, port Port, rec triage.Recorder, ctl <-chan Command, progress func(Progress)) (Result, error) {
	if err := plan.Runnable(); err != nil {
		return Result{ID: plan.ID}, err
	}
	r := newRun(plan, port, rec, progress)
	if err := r.begin(ctx); err != nil {
		r.settleAll(ctx, "not published: "+err.Error())
		if r.started { // else a replay that never ran would read as interrupted
			_ = r.record(triage.ActionReplayFinish, "failed to start: "+err.Error(), nil, nil)
		}
		return r.result(), err
	}
	err := r.loop(ctx, ctl)
	return r.result(), err
}

// run is the state of one Run; only its goroutine touches it,
// except the confirm waiter, which talks through channels.
type run struct {
	plan     Plan
	opts     Options
	port     Port
	rec      triage.Recorder
	progress func(Progress)

	items    map[string]Item
	held     map[string]triage.Message // still held, not yet acked or requeued
	queue    []string                  // ids still to publish, in order
	outcome  map[string]Outcome
	why      map[string]string
	inFlight int

	// Journalled at the next flush: confirmed before the ack, the others as they come.
	toConfirm, toFail, toReturn []string

	started    bool
	phase      Phase
	paused     bool
	canaryLeft int // canary messages still to publish
	observeEnd time.Time
	tailEnd    time.Time // end of the watch after the last publish
	lim        *rate.Limiter
	target     float64
	stopped    string
	aborted    bool
	blocked    string

	published, confirmed, returned, failedAgain int
	pacedFrom, pacedLast                        time.Time
	pacedCount                                  int
	recent                                      []time.Time // publish times within rateWindow
	history                                     [historySlots]float64
	historyAt                                   int64 // unix second of history's last slot
	start                                       time.Time
	depth, baseDepth                            int
}

func newRun(plan Plan, port Port, rec triage.Recorder, progress func(Progress)) *run {
	r := &run{
		plan: plan, opts: plan.Options.withDefaults(), port: port, rec: rec, progress: progress,
		items: map[string]Item{}, held: map[string]triage.Message{},
		outcome: map[string]Outcome{}, why: map[string]string{},
		phase: PhaseHolding, depth: -1, baseDepth: -1, start: time.Now(),
	}
	for _, it := range plan.Items {
		r.items[it.ID] = it
	}
	return r
}

func (r *run) record(action triage.Action, reason string, ids []string, details map[string]any) error {
	d := map[string]any{"replay_id": r.plan.ID}
	for k, v := range details {
		d[k] = v
	}
	if err := r.rec.Record(triage.Record{Action: action, Vhost: r.plan.Vhost, Queue: r.plan.Queue, MessageIDs: ids, Reason: reason, Details: d}); err != nil {
		return fmt.Errorf("replay %s: the journal did not take %s, so the replay stops here: %w", r.plan.ID, action, err)
	}
	return nil
}

// begin journals the plan, holds the sources and settles what a previous,
// interrupted run already did.
func (r *run) begin(ctx context.Context) error {
	prior := r.plan.Prior
	if prior == nil {
		if err := r.record(triage.ActionReplayPlan, "", r.plan.IDs(), map[string]any{"plan": r.plan}); err != nil {
			return err
		}
		prior = &Prior{}
	}
	if err := r.record(triage.ActionReplayStart, "", nil, map[string]any{"resumed": r.plan.Prior != nil}); err != nil {
		return err
	}
	r.started = true
	r.emit()
	confirmed := map[string]bool{}
	for _, id := range prior.Confirmed {
		confirmed[id] = true
	}
	var want []string
	for _, it := range r.plan.Items {
		if o, done := prior.Settled[it.ID]; done {
			r.outcome[it.ID] = o
			continue
		}
		want = append(want, it.ID)
	}
	held, err := r.port.Hold(ctx, r.plan.Queue, want, r.plan.ID)
	if err != nil {
		return fmt.Errorf("replay %s: hold the messages of %s: %w", r.plan.ID, r.plan.Queue, err)
	}
	for _, h := range held {
		switch _, ours := r.items[h.ID]; {
		case !ours:
		case h.Copy: // failed again before the interruption, not yet journalled
			r.signal(Signal{Kind: SignalFailedAgain, ID: h.ID, Reason: "found back in " + r.plan.Queue})
		default:
			r.held[h.ID] = h.Message
		}
	}
	var ackNow, gone []string
	for _, id := range want {
		_, isHeld := r.held[id]
		switch {
		case confirmed[id] && isHeld: // confirmed before a crash, never acked
			ackNow = append(ackNow, id)
		case r.outcome[id] == OutcomeFailedAgain: // its copy is back in the queue
		case confirmed[id]: // confirmed and acked before a crash
			r.outcome[id] = OutcomeResolved
			r.confirmed++
		case isHeld:
			r.queue = append(r.queue, id)
		default:
			gone = append(gone, id)
		}
	}
	if len(ackNow) > 0 {
		if err := r.port.Ack(ctx, ackNow); err != nil {
			return fmt.Errorf("replay %s: ack the sources confirmed before the interruption: %w", r.plan.ID, err)
		}
		for _, id := range ackNow {
			delete(r.held, id)
			r.outcome[id] = OutcomeResolved
			r.confirmed++
		}
	}
	if len(gone) > 0 {
		for _, id := range gone {
			r.outcome[id] = OutcomeUntouched
			r.why[id] = "no longer in " + r.plan.Queue
		}
		if err := r.record(triage.ActionReplayOutcome, string(OutcomeUntouched), gone, map[string]any{"why": "no longer in the queue"}); err != nil {
			return err
		}
	}
	if d, err := r.port.DestinationDepth(ctx, r.plan.DestinationQueues); err == nil && len(r.plan.DestinationQueues) > 0 {
		r.depth, r.baseDepth = d, d
	}
	if prior.CanaryPassed {
		r.afterObservation()
	} else {
		r.canaryLeft = min(r.opts.Canary, len(r.queue))
		r.setRate(r.opts.CanaryRate)
		r.phase = PhaseCanary
	}
	return nil
}

// setRate paces publishing at perSecond from now on. The bucket holds up
// to 50 ms of tokens, so a late timer is caught up without a burst above
// the rate, and starts empty, so a phase never opens with a burst.
func (r *run) setRate(perSecond float64) {
	r.target = perSecond
	burst := max(1, int(perSecond/20))
	r.lim = rate.NewLimiter(rate.Limit(perSecond), burst)
	r.lim.AllowN(time.Now(), burst)
}

type confirmResult struct {
	id  string
	res PublishResult
}

type pending struct {
	id string
	pc PendingConfirm
	at time.Time // when it was published: the confirm timeout runs from here
}

func (r *run) loop(ctx context.Context, ctl <-chan Command) error {
	pend := make(chan pending, maxInFlight)
	results := make(chan confirmResult, maxInFlight)
	waitCtx, stopWaiting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWaiting()
	go func() { // confirms arrive in publish order; wait for each in turn
		for p := range pend {
			c, cancel := context.WithDeadline(waitCtx, p.at.Add(r.opts.ConfirmTimeout))
			res := p.pc.Wait(c)
			cancel()
			results <- confirmResult{p.id, res}
		}
	}()
	defer close(pend)

	depths := make(chan int, 1)
	depthCtx, stopDepth := context.WithCancel(ctx)
	defer stopDepth()
	if len(r.plan.DestinationQueues) > 0 {
		go r.pollDepth(depthCtx, depths)
	}

	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	pub := time.NewTimer(0)
	defer pub.Stop()
	signals := r.port.Signals()
	done := ctx.Done()

	for {
		if r.finished() {
			break
		}
		select {
		case <-done:
			r.aborted = true
			done = nil
			if err := r.record(triage.ActionReplayAbort, "interrupted", nil, nil); err != nil {
				return r.wrapUp(ctx, err)
			}
		case cmd := <-ctl:
			if err := r.command(cmd); err != nil {
				return r.wrapUp(ctx, err)
			}
		case s, ok := <-signals:
			if !ok {
				signals = nil
				continue
			}
			r.signal(s)
		case c := <-results:
			r.inFlight--
			r.settled(c)
		case d := <-depths:
			r.depth = d
		case <-pub.C:
			r.publishDue(ctx, pend)
		case <-tick.C:
			if err := r.flush(ctx); err != nil {
				return r.wrapUp(ctx, err)
			}
			r.advance()
			r.emit()
		}
		r.trip()
		r.armPublish(pub)
	}
	return r.wrapUp(ctx, nil)
}

// finished reports that nothing more will happen: no publishing left to do
// (stopped, aborted or all sent), no confirm pending, and no observation
// window open.
func (r *run) finished() bool {
	if r.inFlight > 0 {
		return false
	}
	if r.stopped != "" || r.aborted {
		return true
	}
	if len(r.queue) > 0 || r.phase == PhaseObserving || r.phase == PhaseCanary {
		return false
	}
	if r.pacedCount == 0 { // all went in the canary, already observed
		return true
	}
	return !r.tailEnd.IsZero() && !time.Now().Before(r.tailEnd)
}

// tailing reports the short watch after the last paced publish.
func (r *run) tailing() bool {
	return !r.tailEnd.IsZero() && time.Now().Before(r.tailEnd)
}

// armPublish sets the timer for the next token, or idles it.
func (r *run) armPublish(t *time.Timer) {
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
	missing := 1 - r.lim.Tokens()
	if missing <= 0 {
		return 0
	}
	return time.Duration(missing / float64(r.lim.Limit()) * float64(time.Second))
}

// publishDue publishes every message the bucket has a token for.
func (r *run) publishDue(ctx context.Context, pend chan<- pending) {
	for r.mayPublish() && r.lim.Allow() {
		id := r.queue[0]
		r.queue = r.queue[1:]
		m := r.held[id]
		out := m
		out.Headers = CopyHeaders(m, id, r.plan.ID, triage.AttemptsOf(m), time.Now())
		pc, err := r.port.Publish(ctx, Publishing{ItemID: id, Route: r.items[id].Route, Message: out})
		now := time.Now()
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
		if err != nil {
			r.settled(confirmResult{id, PublishResult{Why: "publish failed: " + err.Error()}})
			continue
		}
		r.inFlight++
		pend <- pending{id, pc, now}
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

// settled takes one publish's answer: confirmed sources wait for the next
// flush (journal, then ack); the rest is requeued there.
func (r *run) settled(c confirmResult) {
	if c.res.Confirmed {
		r.confirmed++
		// A copy rejected at once can come back through the watch before its
		// confirm is read here: it stays failed-again, and its source is
		// still acked (the copy is the one in the parking queue now).
		if r.outcome[c.id] != OutcomeFailedAgain {
			r.outcome[c.id] = OutcomeConfirmed
		}
		r.toConfirm = append(r.toConfirm, c.id)
		return
	}
	r.returned++
	r.outcome[c.id] = OutcomeReturned
	r.why[c.id] = c.res.Why
	r.toReturn = append(r.toReturn, c.id)
}

func (r *run) signal(s Signal) {
	switch s.Kind {
	case SignalFailedAgain:
		if _, ours := r.items[s.ID]; !ours || r.outcome[s.ID] == OutcomeFailedAgain {
			return
		}
		r.failedAgain++
		r.outcome[s.ID] = OutcomeFailedAgain
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
		if r.stopped == "" {
			r.stopped = "lost the broker connection: " + s.Reason
		}
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
// answered, opens the observation window; a clean window ends it.
func (r *run) advance() {
	if r.ended() {
		return
	}
	switch r.phase {
	case PhaseCanary:
		if r.canaryLeft == 0 && r.inFlight == 0 && len(r.toConfirm) == 0 {
			r.phase = PhaseObserving
			r.observeEnd = time.Now().Add(r.opts.Observe)
		}
	case PhaseRunning:
		// The last copies get a short watch too, so one that fails right
		// away is reported failed-again rather than resolved.
		if len(r.queue) == 0 && r.inFlight == 0 && r.pacedCount > 0 && r.tailEnd.IsZero() {
			r.tailEnd = time.Now().Add(min(r.opts.Observe, maxTail))
		}
	case PhaseObserving:
		if !time.Now().Before(r.observeEnd) {
			r.afterObservation()
			if r.phase == PhaseRunning {
				_ = r.record(triage.ActionReplayRamp, "", nil, map[string]any{"rate": r.target, "canary_passed": true, "auto": true})
			}
		}
	}
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
	if r.ended() || (r.failedAgain == 0 && r.returned == 0 && r.opts.MaxBacklog == 0) {
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
	DestinationDepth      int // -1 unknown
	BaseDepth             int // depth when the replay started; -1 unknown
}

func (r *run) tally() Tally {
	t := Tally{FailedAgain: r.failedAgain, Returned: r.returned, DestinationDepth: r.depth, BaseDepth: r.baseDepth}
	for _, id := range r.plan.IDs() {
		switch r.outcome[id] {
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

// flush journals the outcomes gathered since the last flush, then acks the
// confirmed sources and requeues the returned ones: "confirmed" is in the
// journal before any source is acked, so a resume after a crash acks
// instead of publishing again.
func (r *run) flush(ctx context.Context) error {
	if len(r.toConfirm) > 0 {
		ids := r.toConfirm
		if err := r.record(triage.ActionReplayOutcome, string(OutcomeConfirmed), ids, nil); err != nil {
			return err
		}
		r.toConfirm = nil
		if err := r.port.Ack(ctx, ids); err != nil {
			if r.stopped == "" {
				r.stopped = "could not ack confirmed sources (they may be delivered twice; resume acks them): " + err.Error()
			}
		} else {
			for _, id := range ids {
				delete(r.held, id)
			}
		}
	}
	if len(r.toReturn) > 0 {
		ids := r.toReturn
		why := map[string]any{}
		for _, id := range ids {
			why[id] = r.why[id]
		}
		if err := r.record(triage.ActionReplayOutcome, string(OutcomeReturned), ids, map[string]any{"why": why}); err != nil {
			return err
		}
		r.toReturn = nil
		if err := r.port.Requeue(ctx, ids); err == nil {
			for _, id := range ids {
				delete(r.held, id)
			}
		}
	}
	if len(r.toFail) > 0 {
		if err := r.record(triage.ActionReplayOutcome, string(OutcomeFailedAgain), r.toFail, nil); err != nil {
			return err
		}
		r.toFail = nil
	}
	return nil
}

// wrapUp waits for the confirms still pending (bounded by the confirm
// timeout), flushes, requeues every unpublished source and journals the end.
func (r *run) wrapUp(ctx context.Context, cause error) error {
	if cause != nil && r.stopped == "" {
		r.stopped = cause.Error()
	}
	r.emit()
	flushErr := r.flush(context.WithoutCancel(ctx))
	r.settleAll(ctx, "not published")
	action, reason := triage.ActionReplayFinish, "done"
	switch {
	case r.stopped != "":
		reason = "stopped: " + r.stopped
		if err := r.record(triage.ActionReplayStop, r.stopped, nil, nil); err != nil && cause == nil {
			cause = err
		}
	case r.aborted:
		reason = "aborted"
	}
	res := r.result()
	if err := r.record(action, reason, nil, map[string]any{
		"resolved": res.Resolved, "failed_again": res.FailedAgain, "returned": res.Returned, "untouched": res.Untouched, "published": r.published,
	}); err != nil && cause == nil {
		cause = err
	}
	r.emit()
	return errors.Join(cause, flushErr)
}

// settleAll requeues every source still held and marks it untouched.
func (r *run) settleAll(ctx context.Context, why string) {
	var ids []string
	for _, it := range r.plan.Items {
		if _, ok := r.held[it.ID]; ok {
			ids = append(ids, it.ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	_ = r.port.Requeue(context.WithoutCancel(ctx), ids) // Close requeues them too
	var untouched []string
	for _, id := range ids {
		delete(r.held, id)
		if _, has := r.outcome[id]; !has {
			r.outcome[id] = OutcomeUntouched
			r.why[id] = why
			untouched = append(untouched, id)
		}
	}
	if len(untouched) > 0 {
		_ = r.record(triage.ActionReplayOutcome, string(OutcomeUntouched), untouched, map[string]any{"why": why})
	}
	r.queue = nil
}

func (r *run) pollDepth(ctx context.Context, out chan<- int) {
	t := time.NewTicker(depthEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c, cancel := context.WithTimeout(ctx, depthEvery)
			d, err := r.port.DestinationDepth(c, r.plan.DestinationQueues)
			cancel()
			if err != nil {
				continue
			}
			select {
			case out <- d:
			default:
			}
		}
	}
}

func (r *run) emit() {
	if r.progress != nil {
		r.progress(r.snapshot())
	}
}

func (r *run) snapshot() Progress {
	now := time.Now()
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
		Total: len(r.plan.Items), Published: r.published, Confirmed: r.confirmed, Returned: r.returned,
		FailedAgain: r.failedAgain, Remaining: len(r.queue), InFlight: r.inFlight,
		DestinationDepth: r.depth, History: slices.Clone(r.history[:]), Blocked: r.blocked,
		StoppedBecause: r.stopped, Elapsed: now.Sub(r.start),
	}
	switch {
	case r.stopped != "":
		p.Phase = PhaseStopped
	case r.aborted:
		p.Phase = PhaseAborted
	case r.paused:
		p.Phase = PhasePaused
	case r.finished():
		p.Phase = PhaseDone
	}
	switch {
	case r.phase == PhaseObserving:
		p.ObserveLeft = max(0, time.Until(r.observeEnd))
	case r.tailing() && p.Phase == PhaseRunning:
		p.Phase = PhaseObserving
		p.ObserveLeft = time.Until(r.tailEnd)
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

func (r *run) result() Result {
	res := Result{ID: r.plan.ID, Outcomes: map[string]Outcome{}, Why: map[string]string{},
		Published: r.published, StoppedBecause: r.stopped, Aborted: r.aborted && r.stopped == "",
		PacedPublished: r.pacedCount}
	if r.pacedCount > 1 {
		// n publishes paced at rate span n-1 intervals from the first; one
		// interval before it is when the phase's first token was due.
		res.PacedElapsed = r.pacedLast.Sub(r.pacedFrom) + time.Duration(float64(time.Second)/r.target)
	}
	for _, it := range r.plan.Items {
		o, ok := r.outcome[it.ID]
		if !ok {
			o = OutcomeUntouched
		}
		if o == OutcomeConfirmed {
			o = OutcomeResolved
		}
		res.Outcomes[it.ID] = o
		if w := r.why[it.ID]; w != "" {
			res.Why[it.ID] = w
		}
		switch o {
		case OutcomeResolved:
			res.Resolved++
		case OutcomeFailedAgain:
			res.FailedAgain++
		case OutcomeReturned:
			res.Returned++
		default:
			res.Untouched++
		}
	}
	return res
}

// NextRate is the rate after one ramp-up step: double, capped at ceiling.
func NextRate(current, ceiling float64) float64 {
	if current <= 0 {
		return ceiling
	}
	return min(current*2, ceiling)
}
