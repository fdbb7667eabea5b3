package triage

import (
	"context"
	"fmt"
	"time"
)

// What a discard's outcome says of the broker.
const (
	VerifiedGone = "discarded (verified)"
	NotVerified  = "acked, not yet verified"
)

// maxVerifyIDs bounds the discards verified by reading the queue again:
// a larger one is reported acked, not verified.
const maxVerifyIDs = 1000

// Rereader reads a queue again after a discard (the broker does; a
// snapshot never gets here, its Sweep refuses).
type Rereader interface {
	Browse(ctx context.Context, queue string, opts BrowseOptions) (Batch, error)
}

// verifyDiscard reads the queue again to see whether the discarded
// messages are gone, before the outcome is journalled. On a classic queue
// the acks are applied by the queue process after the channel's close-ok, and a restart before that brings
// them back; the re-read's consume reaches the queue process after the
// acks (it handles acks before consumes), so what it shows is what the
// queue holds once they are applied. Nothing is changed either way: a
// message still there is reported, not acked again.
//
// expect gives what should be left, by base id, for the re-read's
// comparison: asked only there (a map of every message held, 150 MB over
// a million, which a discard checked by depth never reads).
func verifyDiscard(ctx context.Context, s Sweeper, q Queue, req DiscardRequest, res DiscardResult, depth int, expect func() leftAfter) DiscardResult {
	res.Verification = NotVerified
	rr, ok := s.(Rereader)
	switch {
	case len(res.Discarded) == 0:
		return res
	case q.Type == QueueQuorum:
		// Every read of a quorum queue counts a delivery towards its limit
		// (20 by default from 4.0): the user consented to one sweep only.
		res.Verification = NotVerified + " (a quorum queue is not read again: each read counts a delivery)"
		return res
	case len(res.Discarded) > maxVerifyIDs:
		res.Verification = fmt.Sprintf("%s (%d messages: more than %d are counted, not read again)", NotVerified, len(res.Discarded), maxVerifyIDs)
		return verifyByDepth(ctx, s, req, res, depth)
	case !ok:
		return res
	}
	// The same bound as the sweep's; each message is reduced to its base
	// id as it is read, so the second read keeps no bodies either.
	var read []string
	opts := BrowseOptions{Limit: req.Browse.Limit, AcceptDeliveryCost: req.Browse.AcceptDeliveryCost,
		Each: func(m Message) error { read = append(read, baseIDsOf([]Message{m})...); return nil }}
	if opts.Limit <= 0 {
		opts.Limit = DefaultBrowseLimit
	}
	batch, err := rr.Browse(ctx, req.Queue, opts)
	if err != nil {
		res.Verification = NotVerified + " (reading the queue again failed: " + err.Error() + ")"
		return res
	}
	read = append(read, baseIDsOf(batch.Messages)...) // a reader that does not stream
	res.StillThere = expect().stillThere(read)
	switch {
	case len(res.StillThere) > 0:
		res.Verification = fmt.Sprintf("%s: %d still in the queue", NotVerified, len(res.StillThere))
	case batch.Truncated():
		res.Verification = fmt.Sprintf("%s (not among the first %d messages; the rest was not read)", NotVerified, batch.Count())
	default:
		res.Verified, res.Verification = true, VerifiedGone
		return settleDiscard(ctx, s, req, res, depth)
	}
	return res
}

// AckDurability is a broker that writes applied acks to disk on its own
// schedule: for AckSettle after they were applied, a crash of the node
// (kill -9, power loss) still brings the messages back, and no client can
// make the acks durable sooner.
type AckDurability interface {
	AckSettle() time.Duration
}

// settleDiscard keeps a discard that read as gone from being called
// verified before the broker can have written its acks down: it waits the
// broker's settle delay, reads the depth again, and says in the outcome
// what a crash in that window would have undone. A depth that grew back
// (or cannot be read) leaves the discard unverified.
func settleDiscard(ctx context.Context, s Sweeper, req DiscardRequest, res DiscardResult, before int) DiscardResult {
	d, ok := s.(AckDurability)
	b, barrier := s.(AckBarrier)
	if !ok || !barrier || d.AckSettle() <= 0 {
		return res
	}
	wait := d.AckSettle()
	select {
	case <-time.After(wait):
	case <-ctx.Done():
		res.Verified = false
		res.Verification = fmt.Sprintf("%s (stopped before the broker's %s to write the acks down: a node crash then would bring them back)", NotVerified, wait)
		return res
	}
	after, err := b.SettledDepth(ctx, req.Queue)
	switch {
	case err != nil:
		res.Verified = false
		res.Verification = fmt.Sprintf("%s (gone once, but the depth could not be read again %s after the acks: %v)", NotVerified, wait, err)
	case after > before-len(res.Discarded):
		res.Verified = false
		res.Verification = fmt.Sprintf("%s: gone once, but %s after the acks the queue holds %d, more than %d before less %d taken (published meanwhile, or the acks were lost)",
			NotVerified, wait, after, before, len(res.Discarded))
	default:
		res.Verification += fmt.Sprintf("; still gone %s after the acks (%d in the queue). A node crash before that would have brought them back: the broker writes acks to disk on its own schedule; a later read marks any that are back and offers to discard them again", wait, after)
	}
	return res
}

// leftAfter is what a discard expects a second read to show, by base
// identity: occurrence suffixes renumber once a copy is gone, so identical
// messages are counted, not named.
type leftAfter struct {
	left      map[string]int      // held minus discarded, per base id
	discarded map[string][]string // the ids discarded, per base id
	order     []string            // base ids in discard order
}

// expectLeft is what should stay of the held batch (base ids and ids by
// position) once the positions taken are gone.
func expectLeft(bases, ids []string, swept SweepResult) leftAfter {
	l := leftAfter{left: map[string]int{}, discarded: map[string][]string{}}
	for _, b := range bases {
		l.left[b]++
	}
	for _, p := range swept.Taken {
		if p < 0 || p >= len(bases) || p >= len(ids) {
			continue
		}
		b := bases[p]
		l.left[b]--
		if len(l.discarded[b]) == 0 {
			l.order = append(l.order, b)
		}
		l.discarded[b] = append(l.discarded[b], ids[p])
	}
	return l
}

// stillThere names, per base id, as many discarded messages as the read
// found beyond what should be left.
func (l leftAfter) stillThere(read []string) []string {
	seen := map[string]int{}
	for _, b := range read {
		seen[b]++
	}
	var out []string
	for _, b := range l.order {
		extra := min(seen[b]-l.left[b], len(l.discarded[b]))
		if extra > 0 {
			out = append(out, l.discarded[b][:extra]...)
		}
	}
	return out
}

// baseIDsOf is BaseIDs with the envelopes decoded.
func baseIDsOf(ms []Message) []string {
	envs := make([]Envelope, len(ms))
	for i, m := range ms {
		envs[i] = EnvelopeOf(m)
	}
	return BaseIDs(ms, envs)
}

// AckBarrier reads a queue's depth once the acks sent to it before are
// applied (the broker implements it).
type AckBarrier interface {
	SettledDepth(ctx context.Context, queue string) (int, error)
}

// verifyByDepth checks a large discard by count: once the acks are
// applied, the queue must hold no more than it did less what was taken. A
// publisher meanwhile can make it fail; it never makes it pass wrongly.
func verifyByDepth(ctx context.Context, s Sweeper, req DiscardRequest, res DiscardResult, before int) DiscardResult {
	b, ok := s.(AckBarrier)
	if !ok {
		return res
	}
	after, err := b.SettledDepth(ctx, req.Queue)
	switch {
	case err != nil:
		res.Verification += " (reading the depth failed: " + err.Error() + ")"
	case after <= before-len(res.Discarded):
		res.Verified = true
		res.Verification = fmt.Sprintf("%s by depth: %d before, %d after the acks were applied", VerifiedGone, before, after)
		return settleDiscard(ctx, s, req, res, before)
	default:
		res.Verification += fmt.Sprintf(": the queue holds %d once the acks are applied, %d before less %d taken is %d (published meanwhile, or the acks were lost)",
			after, before, len(res.Discarded), before-len(res.Discarded))
	}
	return res
}
