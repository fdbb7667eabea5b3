package broker

import amqp "github.com/rabbitmq/amqp091-go"

// receiveExactBodies makes conn allocate each delivery's body once, at the
// size its content header announces, instead of growing it frame by frame.
//
// amqp091-go (v1.16.0, channel.go recvContent) preallocates a body to the
// header's size only up to the connection's frame size (128 KiB), then
// appends each 128 KiB frame: a 32 MiB body is reallocated about forty
// times on the way, 5.5 times its size in allocations, which is what made
// a replay of one 128 MiB message take 441-939 MB of RSS (issue 23, item
// 9; TestReplayOfALargeMessageCostsLessThanARawReceive). The cap guards a
// client against a server that announces a size it never sends; a
// broker's announced size is a message it holds (max_message_size bounds
// it) and that the read receives whole anyway.
//
// Config.FrameSize is read again only to split a body this connection
// publishes (0 would send it as one frame, which the broker refuses): so
// only connections that never publish take this (the browse connection
// and a replay's hold; the replay publishes on a connection of its own).
// It is set before any channel is opened, and amqp091-go registers a
// channel under the lock its reader takes to dispatch a frame, so the
// reader sees the value.
func receiveExactBodies(conn *amqp.Connection) {
	conn.Config.FrameSize = 0
}
