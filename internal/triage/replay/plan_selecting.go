package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// A replay that selects while it holds reads its queue once. Its plan names
// no message: it is the selection, the one destination --to names, and the
// options. The hold triages each message as it reads it, and holds and
// reports the ones the selection takes; the run makes each an item of the
// plan as it comes, journalled (published) before it is sent, so a resume
// knows exactly which messages the replay took. The plan-first replay read
// the whole queue for its plan, waited while the broker gave that read
// back, then held it again: of a replay of 100,000 that took two reads and
// a requeue, half of the time a Shovel needed for the whole move.
//
// Only a replay whose decision needs no message in advance selects while it
// holds: one destination, allowed by a replay.allow pattern (not as some
// message's own route, which only a read can tell), reached without the
// message's headers, and a selection by group or filter. The caller
// (internal/cli) keeps the plan-first path for every other replay.

// Chooser says whether a message read, under its identity so far, is
// selected (triage.Selection.MessageMatcher).
type Chooser func(m triage.Message, id string) bool

// HoldSelector is a Port whose hold can select as it reads.
type HoldSelector interface {
	HoldStreamer
	// HoldSelecting begins a streamed hold (HoldStream) that holds the
	// first message of each id that choose takes, rather than named ids:
	// a later message with the id of one read before is left in the queue.
	HoldSelecting(ctx context.Context, queue string, choose Chooser, replayID string) (<-chan HeldBatch, error)
}

// NewSelectingPlan is the plan of a replay of queue that selects while it
// holds (Plan.Selecting): sel by group or filter, to opts.To, which an
// allow pattern must match. An error says why such a replay cannot be;
// the plan's Problems, why it may not run.
func NewSelectingPlan(vhost, queue string, sel triage.Selection, opts Options, top triage.Topology) (Plan, error) {
	if err := Selectable(sel, opts, top); err != nil {
		return Plan{}, err
	}
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return Plan{}, err
	}
	to := *opts.To
	p := Plan{ID: NewID(time.Now()), Vhost: vhost, Queue: queue, Selection: sel, Options: opts, Allowed: true, Selecting: true, Items: Items{}}
	d := Destination{Route: to, Allowed: true, Queues: top.Routes(to.Exchange, to.RoutingKey, nil)}
	p.choose = sel.MessageMatcher(top)
	p.Destinations = []Destination{d}
	p.DestinationQueues = append([]string(nil), d.Queues...)
	p.Problems = planProblems(p, top)
	p.Bounded = boundedQueues(p.DestinationQueues, top)
	src, _ := top.Queue(queue)
	p.Warnings = boundedWarnings(p.Bounded, src.Messages) // as if all were selected: the most it may send
	return p, nil
}

// Selectable says why a replay of sel to opts.To cannot select while it
// holds, or nil when it can.
func Selectable(sel triage.Selection, opts Options, top triage.Topology) error {
	switch {
	case opts.To == nil:
		return errors.New("each message's own route is known only once it is read")
	case len(sel.IDs) > 0:
		return errors.New("named ids are checked against a read")
	case sel.Validate() != nil:
		return sel.Validate()
	}
	if ok, err := Allowed(*opts.To, opts.Allow); err != nil || !ok {
		return fmt.Errorf("%s is allowed only as some message's own route, known once it is read", opts.To)
	}
	for _, x := range top.Exchanges {
		if x.Name == opts.To.Exchange && x.Type == "headers" {
			return fmt.Errorf("exchange %q routes by each message's headers", x.Name)
		}
	}
	return nil
}
