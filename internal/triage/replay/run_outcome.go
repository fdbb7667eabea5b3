package replay

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// whyUnconfirmed is what a publish without an answer is reported as: the
// destination may have the copy while the source stays parked.
const whyUnconfirmed = "published, confirm not received: may be delivered twice"

// settled takes one publish's answer: confirmed sources wait for the next
// flush (journal, then ack); the rest is requeued there.
func (r *run) settled(c confirmResult) {
	if c.res.Confirmed {
		r.confirmed++
		r.led.flag(c.id, flagConfirmed, true)
		// A copy rejected at once can come back through the watch before its
		// confirm is read here: it stays failed-again, and its source is
		// still acked (the copy is the one in the parking queue now).
		if !r.led.is(c.id, OutcomeFailedAgain) {
			r.led.settle(c.id, OutcomeConfirmed)
		}
		r.toConfirm = append(r.toConfirm, c.id)
		return
	}
	r.returned++
	r.led.settle(c.id, OutcomeReturned)
	r.why[c.id] = c.res.Why
	if c.res.Unknown {
		r.why[c.id] = whyUnconfirmed + " (" + c.res.Why + ")"
		r.unconfirmed = append(r.unconfirmed, c.id)
	}
	r.toReturn = append(r.toReturn, c.id)
}

// flush journals the outcomes gathered since the last flush, then acks the
// confirmed sources and requeues the returned ones: "confirmed" is in the
// journal before any source is acked, so a resume after a crash acks
// instead of publishing again, and "resolved" after the ack went out.
func (r *run) flush(ctx context.Context) error {
	if err := r.flushConfirmed(ctx); err != nil {
		return err
	}
	if err := r.flushReturned(ctx); err != nil {
		return err
	}
	if len(r.toFail) > 0 {
		if err := r.record(triage.ActionReplayOutcome, string(OutcomeFailedAgain), r.toFail, nil); err != nil {
			return err
		}
		r.toFail = nil
	}
	if len(r.toCollateral) > 0 {
		died := map[string]any{}
		for _, id := range r.toCollateral {
			died[id] = r.collateral[id]
		}
		if err := r.record(triage.ActionReplayOutcome, string(OutcomeCollateral), r.toCollateral, map[string]any{"dead_lettered_from": died}); err != nil {
			return err
		}
		r.toCollateral = nil
	}
	return nil
}

// flushConfirmed journals confirmed, acks, and journals resolved. A failed
// ack stops the run with the sources left unacked: the replay then ends
// resumable, and a resume acks them without publishing again.
//
// While a streamed hold still reads, the confirmed sources wait for its end
// (ackLater), journalled confirmed: a source acked while its consumer is up
// frees a place of that consumer's prefetch, which the broker fills at once
// past the credit the hold's window grants (a hold of 1,000,000 acked as it
// read had 267,000 deliveries waiting in the client and 787 MB of RSS), and
// on a group mixed with others each ack is settled behind every message the
// hold read past, which the port gives back only once the read has ended.
// Held unacked a little longer, a source is still only acked after its
// confirm; a crash before the ack leaves it to a resume, which acks it
// instead of publishing it again.
func (r *run) flushConfirmed(ctx context.Context) error {
	if len(r.toConfirm) > 0 {
		ids := r.toConfirm
		if err := r.record(triage.ActionReplayOutcome, string(OutcomeConfirmed), ids, nil); err != nil {
			return err
		}
		r.toConfirm = nil
		if r.holding != nil || r.ackLater > 0 { // after those waiting, in plan order
			for _, id := range ids {
				r.led.flag(id, flagAckLater, true)
			}
			r.ackLater += len(ids)
		} else if _, err := r.ackConfirmed(ctx, ids); err != nil {
			return err
		}
	}
	if r.ackLater > 0 && r.holding == nil {
		return r.ackTheLater(ctx)
	}
	return nil
}

// ackChunk is how many sources whose ack waited for the read's end go in
// one Ack and one journal entry: all of them at once (700,000 of a
// replay of 1,000,000) took the process from 235 to 279 MiB of RSS.
const ackChunk = 16384

// ackTheLater acks, in plan order and ackChunk at a time, the confirmed
// sources whose ack waited for the hold's read to end. After an ack that
// failed it stops: the rest stay held and confirmed, for a resume to ack.
func (r *run) ackTheLater(ctx context.Context) error {
	var chunk []string
	for i := range r.led.st {
		if r.led.st[i].flags&flagAckLater == 0 {
			continue
		}
		r.led.flagAt(i, flagAckLater, false)
		r.ackLater--
		chunk = append(chunk, r.led.items.ID(i))
		if len(chunk) < ackChunk && r.ackLater > 0 {
			continue
		}
		if acked, err := r.ackConfirmed(ctx, chunk); err != nil || !acked {
			return err
		}
		chunk = nil // the journal may keep the slice it was given
	}
	return nil
}

// ackConfirmed acks sources whose confirm is journalled, and journals
// them resolved. A failed ack (acked false) stops the run with the
// sources left unacked: the replay then ends resumable, and a resume acks
// them without publishing again. An error is the journal's.
func (r *run) ackConfirmed(ctx context.Context, ids []string) (acked bool, err error) {
	if err := r.port.Ack(ctx, ids); err != nil {
		for _, id := range ids {
			r.led.flag(id, flagUnacked, true)
		}
		if r.stopped == "" {
			r.stopped = "could not ack confirmed sources (they may be delivered twice; resume acks them): " + err.Error()
		}
		return false, nil
	}
	var resolved []string
	for _, id := range ids {
		r.led.flag(id, flagHeld, false)
		if !r.led.is(id, OutcomeFailedAgain) {
			resolved = append(resolved, id)
		}
	}
	if len(resolved) == 0 {
		return true, nil
	}
	return true, r.record(triage.ActionReplayOutcome, string(OutcomeResolved), resolved, map[string]any{"acked": true})
}

// flushReturned journals the returned, nacked and unanswered publishes and
// puts their sources back.
func (r *run) flushReturned(ctx context.Context) error {
	if len(r.toReturn) == 0 {
		return nil
	}
	ids := r.toReturn
	why := map[string]any{}
	var unknown []string
	for _, id := range ids {
		why[id] = r.why[id]
		if slices.Contains(r.unconfirmed, id) {
			unknown = append(unknown, id)
		}
	}
	details := map[string]any{"why": why}
	if len(unknown) > 0 {
		details["unconfirmed"] = unknown // the destination may have these copies too
	}
	if err := r.record(triage.ActionReplayOutcome, string(OutcomeReturned), ids, details); err != nil {
		return err
	}
	r.toReturn = nil
	if err := r.port.Requeue(ctx, ids); err != nil {
		r.warn(fmt.Sprintf("could not put %d returned source(s) back (%v): the broker puts them back when the connection closes", len(ids), err))
	}
	for _, id := range ids {
		r.led.flag(id, flagHeld, false)
	}
	return nil
}

// warn keeps what went wrong without stopping the run, for the result.
func (r *run) warn(s string) { r.warnings = append(r.warnings, s) }

// awaitInFlight waits for the confirms still pending, at most the confirm
// timeout on the run's clock, and settles each: confirmed, nacked,
// returned, or, without an answer, unconfirmed (the source stays parked
// and the copy may be delivered too).
func (r *run) awaitInFlight(ctx context.Context, results <-chan confirmResult) {
	if r.inFlight == 0 {
		return
	}
	t := r.clock.NewTimer(r.opts.ConfirmTimeout)
	defer t.Stop()
	force := forceOf(ctx)
	if r.forced {
		force = nil // already given up once; what is in flight now came after
	}
	for r.inFlight > 0 {
		select {
		case c := <-results:
			r.answered(c)
		case <-t.C():
			r.giveUpInFlight("the run ended before an answer")
		case <-force:
			force = nil
			r.giveUpInFlight(whyForced)
		}
	}
}

// whyForced is why a copy in flight was given up on at a second interrupt.
const whyForced = "interrupted twice: dlqt stopped waiting for the answer"

// giveUpInFlight settles every publish still awaiting its confirm as
// unconfirmed: its source goes back, and it may be delivered twice.
func (r *run) giveUpInFlight(why string) {
	ids := make([]string, 0, len(r.flying))
	for id := range r.flying {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		r.answered(confirmResult{id, PublishResult{Why: why, Unknown: true}})
	}
	r.inFlight = 0
}

// wrapUp waits for the confirms still pending (bounded by the confirm
// timeout), flushes, requeues every unpublished source and journals the
// end. A run that leaves confirmed sources unacked journals a stop but no
// finish: it stays resumable, and a resume acks them.
func (r *run) wrapUp(ctx context.Context, cause error, results <-chan confirmResult) error {
	if cause != nil && r.stopped == "" {
		r.stopped = cause.Error()
	}
	holdErr := r.stopHold(ctx)
	r.awaitInFlight(ctx, results)
	r.emit()
	flushErr := r.flush(context.WithoutCancel(ctx))
	r.markUnacked()
	errs := []error{cause, holdErr, flushErr, r.settleAll(ctx, "not published")}
	if r.led.unacked > 0 || r.connLost || r.suspended {
		r.resumable = true
		details := map[string]any{"resumable": true, "unacked": r.unackedIDs(), "published": r.published}
		if r.connLost {
			details["connection_lost"] = true // acks sent just before may not have been applied
		}
		if r.suspended {
			details["suspended"] = true
		}
		errs = append(errs, r.record(triage.ActionReplayStop, r.stopped, nil, details))
		r.emit()
		return joinFirstCause(errs)
	}
	action, reason := triage.ActionReplayFinish, "done"
	switch {
	case r.stopped != "":
		reason = "stopped: " + r.stopped
		errs = append(errs, r.record(triage.ActionReplayStop, r.stopped, nil, nil))
	case r.aborted:
		reason = "aborted"
	}
	res := r.result()
	details := map[string]any{
		"resolved": res.Resolved, "failed_again": res.FailedAgain, "returned": res.Returned, "untouched": res.Untouched, "published": r.published,
	}
	if r.base.counted > 0 || res.DeadLettersAtBaseline > 0 {
		details["baseline_dead_letters_per_s"] = res.BaselineRate
		details["dead_letters_at_baseline"] = res.DeadLettersAtBaseline
	}
	errs = append(errs, r.record(action, reason, nil, details))
	r.emit()
	return joinFirstCause(errs)
}

// joinFirstCause joins errs, dropping repeats: once the journal refused
// an entry, its later refusals say nothing new.
func joinFirstCause(errs []error) error {
	var out []error
	for _, e := range errs {
		if e != nil && !slices.ContainsFunc(out, func(o error) bool { return o.Error() == e.Error() }) {
			out = append(out, e)
		}
	}
	return errors.Join(out...)
}

// markUnacked notes the sources still held at the end whose copies the
// destination confirmed: the confirm could not be journalled or the ack
// failed. They stay in the parking queue while the destination has them.
func (r *run) markUnacked() {
	for i, st := range r.led.st {
		if st.flags&flagHeld != 0 && st.flags&flagConfirmed != 0 {
			r.led.flagAt(i, flagUnacked, true)
		}
	}
}

func (r *run) unackedIDs() []string {
	var ids []string
	for _, it := range r.plan.Items.All() {
		if r.led.has(it.ID, flagUnacked) {
			ids = append(ids, it.ID)
		}
	}
	return ids
}

// settleAll requeues every source still held and marks the ones never
// published untouched; an error is the journal's.
func (r *run) settleAll(ctx context.Context, why string) error {
	var ids []string
	for _, it := range r.plan.Items.All() {
		if r.led.has(it.ID, flagHeld) {
			ids = append(ids, it.ID)
		}
	}
	r.queue = nil
	if len(ids) == 0 {
		return nil
	}
	details := map[string]any{"why": why}
	if err := r.port.Requeue(context.WithoutCancel(ctx), ids); err != nil {
		msg := fmt.Sprintf("could not put %d held source(s) back (%v): the broker puts them back when the connection closes", len(ids), err)
		r.warn(msg)
		details["requeue_error"] = err.Error()
	}
	var untouched []string
	for _, id := range ids {
		r.led.flag(id, flagHeld, false)
		if _, has := r.led.outcome(id); !has {
			r.led.settle(id, OutcomeUntouched)
			r.why[id] = why
			untouched = append(untouched, id)
		}
	}
	if len(untouched) == 0 {
		return nil
	}
	return r.record(triage.ActionReplayOutcome, string(OutcomeUntouched), untouched, details)
}

// result is every item's outcome so far (a confirmed one counts as
// resolved, unless its ack is known to have failed) and the counts.
func (r *run) result() Result {
	res := Result{ID: r.plan.ID, Why: map[string]string{},
		Published: r.published, StoppedBecause: r.stopped, Aborted: r.aborted && r.stopped == "",
		PacedPublished: r.pacedCount, Unconfirmed: slices.Clone(r.unconfirmed), Republished: slices.Clone(r.republished), Resumable: r.resumable, Gone: slices.Clone(r.gone), AckedAgain: slices.Clone(r.ackedAgain),
		Changed:  slices.Clone(r.changed),
		Warnings: slices.Clone(r.warnings)}
	if r.pacedCount > 1 {
		// n publishes paced at rate span n-1 intervals from the first; one
		// interval before it is when the phase's first token was due.
		res.PacedElapsed = r.pacedLast.Sub(r.pacedFrom) + time.Duration(float64(time.Second)/r.target)
	}
	if r.base.over {
		res.Collateral = slices.Sorted(maps.Keys(r.collateral))
	} else {
		res.DeadLettersAtBaseline = len(r.collateral)
	}
	res.BaselineRate = r.base.rate
	r.led.sortLater() // what finds an id in the result is sorted
	res.outcomes = outcomeTable{find: ledger{items: r.led.items, byID: r.led.byID}, codes: make([]uint8, r.plan.Items.Len())}
	for i, it := range r.plan.Items.All() {
		o, ok := r.led.outcome(it.ID)
		if !ok {
			o = OutcomeUntouched
		}
		unacked := r.led.has(it.ID, flagUnacked)
		if o == OutcomeConfirmed && !unacked {
			o = OutcomeResolved
		}
		if unacked {
			res.Unacked = append(res.Unacked, it.ID)
		}
		res.outcomes.codes[i] = outcomeCode(o)
		if w := r.why[it.ID]; w != "" {
			res.Why[it.ID] = w
		}
		switch o {
		case OutcomeResolved:
			res.Resolved++
		case OutcomeConfirmed:
			res.Confirmed++
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
