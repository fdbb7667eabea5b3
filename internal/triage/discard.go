package triage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

// Sweeper is one pass over a queue: hold up to limit messages, let choose
// pick positions, ack exactly those, requeue every other one.
type Sweeper interface {
	// Sweep holds up to opts.Limit messages (the same bound, order and
	// delivery-cost consent as a browse), calls choose once with them, acks
	// exactly the positions it returns and puts every other message back in
	// its place. When it fails before the acks, nothing is acked. A sweeper
	// may hand each held message to opts.Each as it is read instead of
	// keeping it: choose then gets none, and positions count in the order
	// Each saw them.
	Sweep(ctx context.Context, queue string, opts BrowseOptions, choose func(held []Message) []int) (SweepResult, error)
}

// SweepResult says what one sweep did: how many messages it held, and the
// positions (indexes into held) it acked, in ascending order.
type SweepResult struct {
	Held  int
	Taken []int
	Depth int // ready messages when the sweep began, to verify removal by
	// Bound says why the sweep held fewer than the queue's messages when
	// the broker's memory headroom cut it; "" otherwise.
	Bound string
}

// DiscardRequest is one discard as the user confirmed it.
type DiscardRequest struct {
	Vhost, Queue string
	Selection    Selection
	Reason       string // why, in the user's words; required
	Browse       BrowseOptions
	// Bodies, when set, is the SHA-256 of the body each selected id was
	// decided on (an approved proposal's): a message held under that id
	// with another body is another message, and is not discarded.
	Bodies map[string]string
	// RetryOf is the journal entry (a discard's outcome) this discard
	// takes again: its messages came back, a crash undid its acks.
	RetryOf uint64
}

// DiscardResult is what a discard removed. Discarded are the ids acked, in
// queue order; Missing the ids selected by id that the sweep did not find
// (gone, or beyond the browse bound); Held how many messages it looked at.
// Verification says what the broker showed afterwards: an ack is not
// applied when the channel closes (docs/ARCHITECTURE.md), so a discard is
// "discarded (verified)" only once the queue was read again without them.
type DiscardResult struct {
	Discarded    []string
	Missing      []string
	Held         int
	Depth        int    // ready messages when the sweep began
	Bound        string // why the sweep held fewer than the whole queue, when the broker's headroom cut it
	Verified     bool
	Verification string   // VerifiedGone or NotVerified, with why
	StillThere   []string // discarded ids the re-read still found
	// Changed are selected ids held with another body than Bodies names:
	// left in the queue, with the SHA-256 each had (id -> sum).
	Changed map[string]string
}

// ErrNoReason refuses a discard without a reason: the journal must say why a
// message was dropped.
var ErrNoReason = errors.New("a discard needs a reason")

// Discard removes the selected messages of one queue in one sweep, matching
// them by the same identity the read path shows (Analyze over the held
// batch). The decision is journalled before the broker is touched, the ids
// a group or filter resolved to before any ack, and the outcome after,
// with what a second read of the queue showed (verified or not); a decision
// that cannot be journalled is not carried out.
func Discard(ctx context.Context, s Sweeper, top Topology, rec Recorder, req DiscardRequest) (DiscardResult, error) {
	reason := strings.TrimSpace(req.Reason)
	if reason == "" {
		return DiscardResult{}, ErrNoReason
	}
	if err := req.Selection.Validate(); err != nil {
		return DiscardResult{}, err
	}
	q, ok := top.Queue(req.Queue)
	if !ok {
		return DiscardResult{}, fmt.Errorf("queue %q: %w in vhost %q", req.Queue, ErrNotFound, top.Vhost)
	}
	if q.Type == QueueStream {
		return DiscardResult{}, fmt.Errorf("queue %q is a stream: a stream keeps every message until retention drops it, nothing can be discarded", req.Queue)
	}
	// Checked here as well as by the sweeper, so a refused discard leaves no
	// decision in the journal.
	if cost := DeliveryCostOf(q, top.Broker); cost.AsksFirst() && !req.Browse.AcceptDeliveryCost {
		return DiscardResult{}, NewDeliveryCostError(q.Name, cost, q.Messages)
	}
	sel := req.Selection
	sel.IDs = uniqueIDs(sel.IDs)

	decision := Record{Action: ActionDiscard, Vhost: req.Vhost, Queue: req.Queue, MessageIDs: sel.IDs, Reason: reason,
		Details: map[string]any{"step": "decision", "selection": sel.String()}}
	if sel.Group != nil {
		decision.Details["group"] = sel.Group.String()
	} else {
		decision.Details["count"] = len(sel.IDs)
	}
	if req.RetryOf != 0 {
		decision.Details["retry_of"] = req.RetryOf
	}
	if err := rec.Record(decision); err != nil {
		return DiscardResult{}, fmt.Errorf("discard not done, the journal did not take the decision: %w", err)
	}

	var ids []string   // identities of the held batch, as the read path shows them
	var bases []string // the same without occurrence suffixes, to verify by
	var selectErr error
	pass := newSweepPass(top, redact.New(), sel)
	pass.bodies = req.Bodies
	browse := req.Browse
	browse.Each = pass.take
	choose := func(held []Message) []int {
		for _, m := range held { // a sweeper that keeps what it holds
			_ = pass.take(m)
		}
		var picks []int
		ids, picks = pass.picks()
		bases = pass.bases
		if len(sel.IDs) == 0 && len(picks) > 0 {
			// A group or --where decision names no ids: journal them before
			// any ack, so a kill during the acks leaves the list behind.
			if selectErr = recordSelected(rec, req, reason, ids, picks); selectErr != nil {
				return nil
			}
		}
		return picks
	}
	swept, sweepErr := s.Sweep(ctx, req.Queue, browse, choose)
	if sweepErr == nil && selectErr != nil {
		sweepErr = fmt.Errorf("nothing discarded, the journal did not take the selected ids: %w", selectErr)
	}
	res := discarded(swept, sweepErr, ids, sel.IDs, pass.changed)
	if sweepErr == nil {
		res = verifyDiscard(ctx, s, q, req, res, swept.Depth, func() leftAfter { return expectLeft(bases, ids, swept) })
	}
	return res, recordOutcome(rec, req, reason, res, sweepErr)
}

// recordSelected journals the ids a group or filter selection resolved to.
func recordSelected(rec Recorder, req DiscardRequest, reason string, ids []string, picks []int) error {
	sel := make([]string, len(picks))
	for i, p := range picks {
		sel[i] = ids[p]
	}
	return rec.Record(Record{Action: ActionDiscard, Vhost: req.Vhost, Queue: req.Queue, MessageIDs: sel, Reason: reason,
		Details: map[string]any{"step": "selected", "count": len(sel)}})
}

// discarded names what a sweep acked; after a failed sweep the rest is
// still queued, not missing.
func discarded(swept SweepResult, sweepErr error, ids, selected []string, changed map[string]string) DiscardResult {
	res := DiscardResult{Held: swept.Held, Depth: swept.Depth, Bound: swept.Bound, Changed: changed}
	for _, p := range swept.Taken {
		if p >= 0 && p < len(ids) {
			res.Discarded = append(res.Discarded, ids[p])
		}
	}
	if sweepErr != nil {
		return res
	}
	if len(selected) == 0 { // a group or a filter: every id found is one taken
		return res
	}
	gone := make(map[string]bool, len(res.Discarded))
	for _, id := range res.Discarded {
		gone[id] = true
	}
	for _, id := range selected {
		if _, kept := changed[id]; !gone[id] && !kept {
			res.Missing = append(res.Missing, id)
		}
	}
	return res
}

// recordOutcome journals what the discard did and what the broker showed
// afterwards, and says what went wrong:
// the sweep first, else the journal.
func recordOutcome(rec Recorder, req DiscardRequest, reason string, res DiscardResult, sweepErr error) error {
	outcome := Record{Action: ActionDiscard, Vhost: req.Vhost, Queue: req.Queue, MessageIDs: res.Discarded, Reason: reason,
		Details: map[string]any{"step": "outcome", "discarded": len(res.Discarded), "held": res.Held}}
	if len(res.Discarded) > 0 {
		outcome.Details["verification"], outcome.Details["verified"] = res.Verification, res.Verified
	}
	if len(res.StillThere) > 0 {
		outcome.Details["still_there"] = res.StillThere
	}
	if len(res.Missing) > 0 {
		outcome.Details["missing"] = res.Missing
	}
	if len(res.Changed) > 0 {
		outcome.Details["changed"] = res.Changed
	}
	if req.RetryOf != 0 {
		outcome.Details["retry_of"] = req.RetryOf
	}
	if sweepErr != nil {
		outcome.Details["error"] = sweepErr.Error()
	}
	recErr := rec.Record(outcome)
	switch {
	case sweepErr != nil:
		return fmt.Errorf("discard from %q: %w", req.Queue, sweepErr)
	case recErr != nil:
		return fmt.Errorf("discarded %d message(s) from %q but the journal did not take the outcome: %w", len(res.Discarded), req.Queue, recErr)
	}
	return nil
}

// uniqueIDs drops repeated ids, keeping the first of each in order.
func uniqueIDs(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
