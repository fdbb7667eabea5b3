package replay

import (
	"context"
	"fmt"

	"github.com/dlqt/dlqt/internal/triage"
)

// A new replay on a port whose hold streams (HoldStreamer) publishes while
// its hold is still reading: the canary goes out as soon as its first
// messages are held, and the hold of a large group reads the rest during
// the canary and its watch, where it used to read all of it first (a
// group of 100,000 took 6 s of a 32 s replay). Nothing else changes: each
// message is held before it is published, its body is checked against the
// decision's first, and a source is acked only after its copy was
// confirmed. A resume holds whole first, as it settles what the
// interrupted run left by what the hold finds.

// beginStreamed starts the streamed hold, then the baseline and the canary.
func (r *run) beginStreamed(ctx context.Context, hs HoldStreamer) error {
	var held <-chan HeldBatch
	var err error
	if r.plan.Selecting {
		held, err = hs.(HoldSelector).HoldSelecting(ctx, r.plan.Queue, r.plan.choose, r.plan.ID) // begin checked it can
	} else {
		held, err = hs.HoldStream(ctx, r.plan.Queue, r.plan.IDs(), r.plan.ID)
	}
	if err != nil {
		return fmt.Errorf("replay %s: hold the messages of %s: %w", r.plan.ID, r.plan.Queue, err)
	}
	r.holding, r.streamer, r.unheard, r.changedLater = held, hs, r.plan.Items.Len(), map[string]string{}
	r.baseDepthNow(ctx)
	r.startBaseline(false)
	return nil
}

// heldMore takes one batch of the streamed hold: its sources join the
// queue to publish, in the order read.
func (r *run) heldMore(b HeldBatch) {
	if r.plan.Selecting {
		r.takeItems(b.Held)
	}
	r.unheard = max(0, r.unheard-len(b.Held))
	r.queue = append(r.queue, r.sortHeld(b.Held, r.changedLater)...)
	if b.Err != nil {
		r.holdErr = b.Err
	}
}

// holdEnded settles what the streamed hold did not hold: each item it never
// reported is untouched (no longer in the queue, or, cut, not reached
// because the run ended first), and each held with another body is put back. A read
// that failed stops the replay; what it held is settled as at any stop.
func (r *run) holdEnded(ctx context.Context, cut bool) error {
	r.holding, r.unheard = nil, 0
	why := "no longer in " + r.plan.Queue
	switch {
	case r.holdErr != nil:
		why = fmt.Sprintf("not held: the hold's read of %s ended early (%v)", r.plan.Queue, r.holdErr)
		if r.stopped == "" && !r.aborted {
			r.stopped = why
		}
	case cut:
		why = "not held: the replay ended before its hold read it"
	}
	var gone []string
	for _, it := range r.plan.Items.All() {
		_, settled := r.led.outcome(it.ID)
		_, changed := r.changedLater[it.ID]
		if !settled && !changed && !r.led.has(it.ID, flagHeld) {
			r.led.settle(it.ID, OutcomeUntouched)
			r.why[it.ID] = why
			gone = append(gone, it.ID)
		}
	}
	if r.phase == PhaseCanary {
		r.canaryLeft = min(r.canaryLeft, len(r.queue))
	}
	if len(gone) > 0 {
		if err := r.record(triage.ActionReplayOutcome, string(OutcomeUntouched), gone, map[string]any{"why": why}); err != nil {
			return err
		}
	}
	changed := r.changedLater
	r.changedLater = nil
	return r.leaveChanged(ctx, changed)
}

// stopHold ends a streamed hold's read early, when the run ends before it
// did, and takes in what it held meanwhile, to be settled with the rest.
func (r *run) stopHold(ctx context.Context) error {
	if r.holding == nil {
		return nil
	}
	r.streamer.StopHold()
	for b := range r.holding {
		r.heldMore(b)
	}
	r.holdErr = nil // asked for
	return r.holdEnded(ctx, true)
}

// takeItems makes each source a selecting replay's hold took an item of
// the plan, to the plan's one destination. Its first outcome is
// journalled before it is sent (published), so the journal names every
// message the replay took, and a resume finds them all.
func (r *run) takeItems(held []HeldMessage) {
	for _, h := range held {
		if _, known := r.led.index(h.ID); !known && !h.Copy {
			r.led.add(Item{ID: h.ID, Route: *r.opts.To})
		}
	}
	r.plan.Items = r.led.items
}
