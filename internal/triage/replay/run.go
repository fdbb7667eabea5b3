package replay

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"golang.org/x/time/rate"

	"github.com/dlqt/dlqt/internal/triage"
)

// Timings of a running replay.
const (
	progressEvery = 250 * time.Millisecond // gauge refresh and outcome flush
	depthEvery    = time.Second            // destination depth poll
	maxInFlight   = 2000                   // publishes awaiting their confirm
	publishBatch  = 500                    // least room in flight a full window waits for
	rateWindow    = 2 * time.Second        // achieved rate is measured over this
	historySlots  = 60                     // seconds of sparkline
	maxTail       = 5 * time.Second        // watch after the last publish, at most
)

// Run carries out a plan: records it, holds the sources through port,
// publishes the canary at CanaryRate, observes for Observe, then waits for
// RampUp (or, with AutoRamp, goes on at Rate), publishes the rest
// paced by a token bucket, and watches the last copies for up to 5 s (never
// longer than Observe; not at all when the port is Blind and no MaxBacklog
// is set) before it reports. ctl takes pause, resume, ramp-up
// and abort at any time; progress (may be nil) is called at least every 250 ms from
// Run's goroutine. A threshold (a failed-again copy, a return or nack,
// destination backlog over MaxBacklog, a lost connection) stops it with
// Result.StoppedBecause set and a nil error; an error means the journal
// failed (the replay stops rather than act unrecorded) or the sources could
// not be held. A cancelled ctx aborts like Abort. Every item ends with
// one outcome; unpublished sources are requeued.
func Run(ctx context.Context, plan Plan, port Port, rec triage.Recorder, ctl <-chan Command, progress func(Progress)) (Result, error) {
	return Runner{Port: port, Journal: rec, Progress: progress}.Run(ctx, plan, ctl)
}

// Runner is what a replay runs with: its ports and its clock.
type Runner struct {
	Port     Port
	Journal  triage.Recorder
	Clock    Clock          // nil: the wall clock
	Progress func(Progress) // may be nil
}

// Run carries out plan as the package-level Run does, on rn's clock.
func (rn Runner) Run(ctx context.Context, plan Plan, ctl <-chan Command) (Result, error) {
	if err := plan.Runnable(); err != nil {
		return Result{ID: plan.ID}, err
	}
	r := newRun(plan, rn)
	if err := r.begin(ctx); err != nil {
		errs := []error{err, r.settleAll(ctx, "not published: "+err.Error())}
		switch {
		case !r.started: // else a replay that never ran would read as interrupted
		case r.led.unacked > 0 || suspendedCtx(ctx): // a resume whose acks failed, or a shutdown, stays resumable
			r.resumable, r.stopped = true, err.Error()
			errs = append(errs, r.record(triage.ActionReplayStop, r.stopped, nil, map[string]any{"resumable": true, "unacked": r.unackedIDs()}))
		default:
			errs = append(errs, r.record(triage.ActionReplayFinish, "failed to start: "+err.Error(), nil, nil))
		}
		return r.result(), joinFirstCause(errs)
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
	clock    Clock
	progress func(Progress)

	led      ledger   // each item's outcome, and whether it is held, confirmed, unacked
	queue    []string // ids still to publish, in order
	why      map[string]string
	inFlight int
	flying   map[string]bool // ids published, confirm pending
	// journalled are ids journalled as published and not sent yet (the
	// canary's rest): a kill names them too, as possibly delivered twice.
	journalled map[string]bool

	unconfirmed []string          // published, no confirm came: may be delivered twice
	republished []string          // sent before an interruption, no answer journalled: sent again
	gone        []string          // confirmed before an interruption, source gone since
	ackedAgain  []string          // resolved before an interruption, yet back in the queue: acked again
	changed     []string          // held with another body than the decision's: put back untouched
	collateral  map[string]string // not replayed, dead-lettered from a destination: id -> queue
	// collateralOrder is collateral's ids as they came; they are journaled
	// only once they exceed the baseline.
	collateralOrder []string
	// holding are the batches of a streamed hold (HoldStreamer) until its
	// read ends, nil then or without one; unheard counts the items it has
	// not reported yet, and changedLater the ones held with another body
	// than the decision's, put back once the read ends (put back to its
	// live consumer, each would come straight back to it).
	holding      <-chan HeldBatch
	streamer     HoldStreamer
	unheard      int
	changedLater map[string]string
	holdErr      error
	base         baseline
	warnings     []string // what went wrong without stopping the run
	depthErr     string
	resumable    bool
	// connLost: a connection or channel died under the run. Acks it sent
	// just before may never have been applied, so it ends resumable: a
	// resume acks again the resolved sources it finds back.
	connLost bool

	// Journalled at the next flush: confirmed before the ack, the others as they come.
	toConfirm, toFail, toReturn, toCollateral []string
	// ackLater counts the confirmed sources, journalled so and flagged
	// flagAckLater, whose ack waits for the streamed hold's read to end
	// (flushConfirmed).
	ackLater int

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
	forced     bool // a second interrupt gave up on the confirms in flight
	suspended  bool // cancelled with a resumable cause: a server shutting down
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

func newRun(plan Plan, rn Runner) *run {
	if rn.Clock == nil {
		rn.Clock = SystemClock{}
	}
	r := &run{
		plan: plan, opts: plan.Options.withDefaults(), port: rn.Port, rec: rn.Journal, clock: rn.Clock, progress: rn.Progress,
		led: newLedger(plan.Items), why: map[string]string{}, flying: map[string]bool{}, journalled: map[string]bool{},
		collateral: map[string]string{},
		phase:      PhaseHolding, depth: -1, baseDepth: -1, start: rn.Clock.Now(),
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
		if err := r.record(triage.ActionReplayPlan, "", r.plan.IDs(), map[string]any{"plan": r.plan.record()}); err != nil {
			return err
		}
		prior = &Prior{}
	}
	if err := r.record(triage.ActionReplayStart, "", nil, map[string]any{"resumed": r.plan.Prior != nil}); err != nil {
		return err
	}
	r.started = true
	r.emit()
	if r.plan.Selecting && r.plan.Prior == nil {
		hs, ok := r.port.(HoldSelector)
		if !ok || r.plan.choose == nil || r.opts.To == nil {
			return fmt.Errorf("replay %s selects as it holds, and this broker port cannot: nothing was held", r.plan.ID)
		}
		return r.beginStreamed(ctx, hs)
	}
	if hs, ok := r.port.(HoldStreamer); ok && r.plan.Prior == nil {
		return r.beginStreamed(ctx, hs)
	}
	var want, resolved []string
	for _, it := range r.plan.Items.All() {
		if o, done := prior.Settled[it.ID]; done {
			r.led.settle(it.ID, o)
			if o == OutcomeResolved {
				resolved = append(resolved, it.ID)
			}
			continue
		}
		want = append(want, it.ID)
	}
	if err := r.hold(ctx, append(slices.Clone(want), resolved...)); err != nil {
		return err
	}
	if err := r.ackAgain(ctx, resolved); err != nil {
		return err
	}
	if err := r.settlePrior(ctx, want, prior); err != nil {
		return err
	}
	r.baseDepthNow(ctx)
	r.startBaseline(prior.CanaryPassed)
	return nil
}

// baseDepthNow takes the destination depth the backlog threshold counts from.
func (r *run) baseDepthNow(ctx context.Context) {
	if len(r.plan.DestinationQueues) > 0 {
		d, err := r.port.DestinationDepth(ctx, r.plan.DestinationQueues)
		r.noteDepth(depthReading{d, err})
		r.baseDepth = r.depth
	}
}

// hold takes the wanted sources out of circulation; a copy of this replay
// found back in the queue failed again before an interruption.
func (r *run) hold(ctx context.Context, want []string) error {
	held, err := r.port.Hold(ctx, r.plan.Queue, want, r.plan.ID)
	if err != nil {
		return fmt.Errorf("replay %s: hold the messages of %s: %w", r.plan.ID, r.plan.Queue, err)
	}
	changed := map[string]string{}
	r.sortHeld(held, changed)
	return r.leaveChanged(ctx, changed)
}

// sortHeld takes in what a hold reports: the sources it holds, copies of
// this replay found back in the queue (they failed again before an
// interruption, not yet journalled), and into changed the held messages
// whose body is not the one decided on. It returns the sources now held.
func (r *run) sortHeld(held []HeldMessage, changed map[string]string) []string {
	var ids []string
	for _, h := range held {
		switch it, ours := r.led.item(h.ID); {
		case !ours:
		case h.Copy:
			r.signal(Signal{Kind: SignalFailedAgain, ID: h.ID, Reason: "found back in " + r.plan.Queue})
		case it.changed(h.BodySHA256) != "":
			changed[h.ID] = it.changed(h.BodySHA256)
		default:
			r.led.flag(h.ID, flagHeld, true)
			ids = append(ids, h.ID)
		}
	}
	return ids
}

// leaveChanged puts back the held messages whose body is not the one a
// decision was made on and journals each untouched, with why.
func (r *run) leaveChanged(ctx context.Context, why map[string]string) error {
	if len(why) == 0 {
		return nil
	}
	ids := slices.Sorted(maps.Keys(why))
	if err := r.port.Requeue(ctx, ids); err != nil {
		r.warn(fmt.Sprintf("could not put back %d changed message(s) (%v): the broker puts them back when the connection closes", len(ids), err))
	}
	for _, id := range ids {
		r.led.settle(id, OutcomeUntouched)
		r.why[id] = why[id]
		r.changed = append(r.changed, id)
		if err := r.record(triage.ActionReplayOutcome, string(OutcomeUntouched), []string{id}, map[string]any{"why": why[id], "changed": true}); err != nil {
			return err
		}
	}
	return nil
}

// settlePrior sorts the wanted sources by what an interrupted run did:
// confirmed and still held is acked now, confirmed and gone was acked,
// held is queued for publishing (said to be possibly twice when it was
// sent with no answer journalled), and the rest left the queue meanwhile.
func (r *run) settlePrior(ctx context.Context, want []string, prior *Prior) error {
	confirmed, sent := map[string]bool{}, map[string]bool{}
	for _, id := range prior.Confirmed {
		confirmed[id] = true
	}
	for _, id := range prior.Published {
		sent[id] = true
	}
	var ackNow, goneConfirmed, gone []string
	for _, id := range want {
		isHeld := r.led.has(id, flagHeld)
		switch {
		case confirmed[id] && isHeld: // confirmed before a crash, never acked
			ackNow = append(ackNow, id)
		case r.led.is(id, OutcomeFailedAgain): // its copy is back in the queue
		case r.led.is(id, OutcomeUntouched): // held with another body, put back
		case confirmed[id]: // confirmed, and its source gone since
			goneConfirmed = append(goneConfirmed, id)
		case isHeld:
			r.queue = append(r.queue, id)
			if sent[id] {
				r.republished = append(r.republished, id)
			}
		default:
			gone = append(gone, id)
		}
	}
	if err := r.ackPrior(ctx, ackNow); err != nil {
		return err
	}
	if err := r.goneConfirmed(goneConfirmed); err != nil {
		return err
	}
	if err := r.sentBefore(); err != nil {
		return err
	}
	if len(gone) == 0 {
		return nil
	}
	for _, id := range gone {
		r.led.settle(id, OutcomeUntouched)
		r.why[id] = "no longer in " + r.plan.Queue
		if sent[id] {
			r.why[id] += whyGoneAfterSend
		}
	}
	return r.record(triage.ActionReplayOutcome, string(OutcomeUntouched), gone, map[string]any{"why": "no longer in the queue"})
}

// Why a resume publishes again, or cannot, a message sent before the
// interruption whose answer was never journalled.
const (
	whyRepublished   = "sent before the interruption with no answer journalled, published again: may be delivered twice"
	whyGoneAfterSend = "; it was sent before the interruption with no answer journalled: the destination may have it"
)

// sentBefore journals the sources a run before the interruption had sent
// without journalling an answer, which this resume publishes again: the
// destination may get each twice.
func (r *run) sentBefore() error {
	if len(r.republished) == 0 {
		return nil
	}
	for _, id := range r.republished {
		r.why[id] = whyRepublished
	}
	return r.record(triage.ActionReplayOutcome, string(OutcomePublished), r.republished, map[string]any{"may_be_delivered_twice": true, "why": whyRepublished})
}

// ackPrior acks the sources an interrupted run had confirmed copies of but
// never acked, and journals them resolved.
func (r *run) ackPrior(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := r.port.Ack(ctx, ids); err != nil {
		for _, id := range ids {
			// still confirmed, never "untouched": the next resume acks it
			r.led.settle(id, OutcomeConfirmed)
			r.led.flag(id, flagConfirmed|flagUnacked, true)
		}
		return fmt.Errorf("replay %s: ack the sources confirmed before the interruption: %w", r.plan.ID, err)
	}
	for _, id := range ids {
		r.led.flag(id, flagHeld, false)
		r.led.settle(id, OutcomeResolved)
		r.confirmed++
	}
	return r.record(triage.ActionReplayOutcome, string(OutcomeResolved), ids, map[string]any{"acked": true, "why": "confirmed before the interruption, acked on resume"})
}

// whyAckedAgain is what the journal says of a source acked again.
const whyAckedAgain = "resolved before the interruption, yet back in the queue (the broker never applied its ack): its copy was confirmed, so it is acked again"

// ackAgain acks the sources a run before the interruption had resolved
// that the hold found back in the queue: their acks were sent, but the
// broker lost them with the connection (a node killed before it applied
// them). Their copies were confirmed, so they are taken now, not
// published again; left there, each would be delivered twice.
func (r *run) ackAgain(ctx context.Context, resolved []string) error {
	var back []string
	for _, id := range resolved {
		if r.led.has(id, flagHeld) {
			back = append(back, id)
		}
	}
	if len(back) == 0 {
		return nil
	}
	if err := r.port.Ack(ctx, back); err != nil {
		for _, id := range back {
			r.led.flag(id, flagUnacked, true) // the replay stays resumable: the next resume tries again
		}
		return fmt.Errorf("replay %s: ack the %d sources resolved before the interruption that are back in the queue: %w", r.plan.ID, len(back), err)
	}
	for _, id := range back {
		r.led.flag(id, flagHeld, false)
		r.why[id] = whyAckedAgain
	}
	r.ackedAgain = append(r.ackedAgain, back...)
	return r.record(triage.ActionReplayOutcome, string(OutcomeResolved), back, map[string]any{"acked": true, "acked_again": true, "why": whyAckedAgain})
}

// goneConfirmed settles confirmed messages whose sources are no longer in
// the queue: acked before the interruption (the journal did not say so yet)
// or taken by someone else since. Either way the destination has the copy;
// the journal says which case it cannot tell apart.
func (r *run) goneConfirmed(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	const why = "confirmed before the interruption; its source is no longer in the queue (acked then, or taken since)"
	for _, id := range ids {
		r.led.settle(id, OutcomeResolved)
		r.why[id] = why
		r.confirmed++
	}
	r.gone = append(r.gone, ids...)
	return r.record(triage.ActionReplayOutcome, string(OutcomeResolved), ids, map[string]any{"acked": "unknown", "why": why})
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
	if r.holding != nil || len(r.queue) > 0 || r.phase == PhaseObserving || r.phase == PhaseCanary {
		return false
	}
	if r.pacedCount == 0 { // all went in the canary, already observed
		return true
	}
	return !r.tailEnd.IsZero() && !r.clock.Now().Before(r.tailEnd)
}

// tailing reports the short watch after the last paced publish.
func (r *run) tailing() bool {
	return !r.tailEnd.IsZero() && r.clock.Now().Before(r.tailEnd)
}
