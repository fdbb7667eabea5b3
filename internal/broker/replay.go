package broker

import (
	"context"

	"github.com/dlqt/dlqt/internal/triage"
)

// Replay is the broker side of one replay (triage.ReplayPort): it holds the
// source messages on the reading connection, publishes on a connection of
// its own (confirm mode, mandatory; a blocked connection must not stall the
// reads), and watches for copies of this replay coming back into the
// parking queue through a temporary exclusive queue bound like it.
type Replay struct {
	live     *Live
	replayID string
	queue    string
}

var _ triage.ReplayPort = (*Replay)(nil)

// OpenReplay prepares replay replayID of queue: the publishing connection,
// and the watch queue bound like the parking queue (same exchanges, keys
// and arguments). Close it when done: that requeues whatever is still held.
func (l *Live) OpenReplay(ctx context.Context, replayID, queue string) (*Replay, error) {
	panic("not implemented")
}

// Hold implements triage.ReplayPort.
func (r *Replay) Hold(ctx context.Context, queue string, ids []string, replayID string) ([]triage.HeldMessage, error) {
	panic("not implemented")
}

// Publish implements triage.ReplayPort.
func (r *Replay) Publish(ctx context.Context, p triage.ReplayPublishing) (triage.PendingConfirm, error) {
	panic("not implemented")
}

// Ack implements triage.ReplayPort.
func (r *Replay) Ack(ctx context.Context, ids []string) error { panic("not implemented") }

// Requeue implements triage.ReplayPort.
func (r *Replay) Requeue(ctx context.Context, ids []string) error { panic("not implemented") }

// Signals implements triage.ReplayPort.
func (r *Replay) Signals() <-chan triage.ReplaySignal { panic("not implemented") }

// DestinationDepth implements triage.ReplayPort.
func (r *Replay) DestinationDepth(ctx context.Context, queues []string) (int, error) {
	panic("not implemented")
}

// Close implements triage.ReplayPort.
func (r *Replay) Close() error { panic("not implemented") }
