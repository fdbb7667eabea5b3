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
}

func (e *DeliveryCostError) Error() string {
	return fmt.Sprintf("queue %q is a quorum queue with delivery-limit %d: browsing adds 1 to the delivery count of each of its %d messages, and a message that passes the limit is dead-lettered or dropped",
		e.Queue, e.Limit, e.Depth)
}
