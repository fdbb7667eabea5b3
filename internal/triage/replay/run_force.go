package replay

import (
	"context"
	"errors"
)

type forceKey struct{}

// WithForce returns ctx carrying force: closed, it tells a run that was
// interrupted (ctx cancelled) to stop waiting for the confirms still in
// flight, a second Ctrl-C. Each such copy is settled as unconfirmed (its
// source goes back, the journal and the result say it may be delivered
// twice) instead of being waited on for the confirm timeout.
func WithForce(ctx context.Context, force <-chan struct{}) context.Context {
	return context.WithValue(ctx, forceKey{}, force)
}

// forceOf is ctx's force channel; nil, which never delivers, without one.
func forceOf(ctx context.Context) <-chan struct{} {
	force, _ := ctx.Value(forceKey{}).(<-chan struct{})
	return force
}

// suspends reports a cancellation that suspends the replay instead of
// aborting it: its cause says it is resumable (a server shutting down
// cancels its sessions so), as an operator's Ctrl-C does not. The run then
// ends resumable, with a stop and no finish in the journal, so that
// `dlqt replay --resume` continues it.
func suspends(ctx context.Context) (why string, ok bool) {
	var r interface{ Resumable() bool }
	cause := context.Cause(ctx)
	if errors.As(cause, &r) && r.Resumable() {
		return cause.Error(), true
	}
	return "", false
}

func suspendedCtx(ctx context.Context) bool {
	_, ok := suspends(ctx)
	return ok
}
