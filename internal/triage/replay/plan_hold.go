package replay

import (
	"fmt"

	"github.com/dlqt/dlqt/internal/triage"
)

// holdBound is how many messages from the head of the queue the replay's
// hold must read to reach every chosen message: the last chosen position
// plus one (0 when nothing is chosen). What lies beyond is never held, so
// a lost hold cannot spend its deliveries. The position is the browse's
// (the TUI plans from the chosen messages alone), or the place in the
// inspection where a message carries none.
func holdBound(msgs triage.List, chosen []int32) int {
	bound := 0
	for _, i := range chosen {
		bound = max(bound, int(i)+1, msgs.At(int(i)).Message.Position+1)
	}
	return bound
}

// HoldLimit is the hold limit for this plan under a read limit (0: none):
// the plan's bound, when it has one and is the smaller.
func (p Plan) HoldLimit(limit int) int {
	if p.HoldUpTo > 0 && (limit <= 0 || p.HoldUpTo < limit) {
		return p.HoldUpTo
	}
	return limit
}

// atLimitWarning says, for the dry run, how many of the messages the hold
// will take have no delivery left on a quorum queue with a delivery limit:
// while held they are safe, but a lost hold (dlqt killed, its connection
// closed) returns them with one delivery counted, and the broker then
// dead-letters or drops them. The hold asks for consent before it takes
// such a message (--accept-delivery-cost).
func atLimitWarning(in triage.Inspection, bound int) (atLimit int, warnings []string) {
	q, ok := in.Topology.Queue(in.Batch.Queue)
	if !ok {
		return 0, nil
	}
	cost := triage.DeliveryCostOf(q, in.Topology.Broker)
	if !cost.Limited {
		return 0, nil
	}
	for i := range in.Len() {
		if t := in.At(i); max(i, t.Message.Position) < bound && cost.PeeksLeft(t.DeliveryCount) == 0 {
			atLimit++
		}
	}
	if atLimit == 0 {
		return 0, nil
	}
	return atLimit, []string{fmt.Sprintf("%d of the %d message(s) the replay holds (up to the last selected one) have no delivery left (delivery-limit %d): "+
		"if the hold is lost (dlqt killed, its connection closed) the broker dead-letters or drops them; the replay needs --accept-delivery-cost to hold them",
		atLimit, bound, cost.Limit)}
}
