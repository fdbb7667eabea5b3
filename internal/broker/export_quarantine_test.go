package broker

import "context"

// RawHead reads the first n messages through the management API and puts
// them back, so tests can check a queue's message set without AMQP (which
// an undecodable message stops).
func (l *Live) RawHead(ctx context.Context, queue string, n int) ([]RawMessage, error) {
	return l.getRaw(ctx, queue, n, "ack_requeue_true")
}
