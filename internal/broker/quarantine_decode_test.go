package broker

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// amqp091-go closes a connection with a FrameError for every failed read:
// a message it cannot parse, and a node killed under it alike. Only the
// first names a message (seen: a kill -9 of a cluster's node was reported
// as "a message has headers the AMQP client cannot decode").
func TestOnlyAParseFailureIsADecodeFailure(t *testing.T) {
	for _, c := range []struct {
		err  *amqp.Error
		want bool
	}{
		{&amqp.Error{Code: amqp.FrameError, Reason: amqp.ErrSyntax.Error()}, true},
		{&amqp.Error{Code: amqp.FrameError, Reason: amqp.ErrFrame.Error()}, true},
		{amqp.ErrSyntax, true},
		{&amqp.Error{Code: amqp.FrameError, Reason: "read tcp 127.0.0.1:51296->127.0.0.1:5721: read: connection reset by peer"}, false},
		{&amqp.Error{Code: amqp.FrameError, Reason: "EOF"}, false},
		{&amqp.Error{Code: amqp.FrameError, Reason: amqp.ErrSyntax.Error(), Server: true}, false},
	} {
		if got := isDecodeFailure(c.err); got != c.want {
			t.Errorf("%v: decode failure %v, want %v", c.err, got, c.want)
		}
	}
}
