package triage

import (
	"errors"
	"fmt"
)

// ErrNotFound is wrapped by readers when a queue or vhost does not exist.
var ErrNotFound = errors.New("not found")

// DeliveryCostError refuses to browse a quorum queue with a delivery limit
// until the user accepts that every read message's delivery count grows by
// one: messages already near the limit would be dead-lettered or dropped.
type DeliveryCostError struct {
	Queue string
	Limit int64
	Depth int
	// Default: the queue sets no limit; Limit is the broker's default
	// (RabbitMQ 4.0 and later), named so the user is not left puzzled.
	Default bool
}

// NewDeliveryCostError refuses a read of q whose cost asks first.
func NewDeliveryCostError(q string, c DeliveryCost, depth int) *DeliveryCostError {
	return &DeliveryCostError{Queue: q, Limit: c.Limit, Depth: depth, Default: c.Default}
}

func (e *DeliveryCostError) Error() string {
	limit := fmt.Sprintf("delivery-limit %d", e.Limit)
	if e.Default {
		limit = fmt.Sprintf("the default delivery-limit %d of RabbitMQ 4.0 and later (it sets none)", e.Limit)
	}
	return fmt.Sprintf("queue %q is a quorum queue with %s: browsing adds 1 to the delivery count of each of its %d messages, and a message that passes the limit is dead-lettered or dropped",
		e.Queue, limit, e.Depth)
}

// HoldAtLimitError refuses a replay's hold that would take messages with no
// delivery left on a quorum queue with a delivery limit, until the user
// accepts the cost: held they are safe, but a lost hold (dlqt killed, its
// connection closed) counts a delivery for each, and the broker then
// dead-letters or drops them.
type HoldAtLimitError struct {
	Queue   string
	Limit   int64
	AtLimit int // held messages with no delivery left
	Held    int // messages the hold read
}

func (e *HoldAtLimitError) Error() string {
	return fmt.Sprintf("queue %q: %d of the %d messages the replay would hold have no delivery left (delivery-limit %d): if the hold were lost (dlqt killed, its connection closed) the broker would dead-letter or drop them; nothing was changed, pass --accept-delivery-cost to replay anyway",
		e.Queue, e.AtLimit, e.Held, e.Limit)
}
