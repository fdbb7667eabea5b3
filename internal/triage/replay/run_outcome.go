package replay

import (
	"context"
	"errors"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

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

// result is every item's outcome so far (a confirmed one counts as
// resolved) and the counts.
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
