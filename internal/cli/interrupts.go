package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/dlqt/dlqt/internal/triage/replay"
)

// Interrupts turns the first Ctrl-C, SIGTERM or SIGHUP (the session dlqt
// runs in hung up: an ssh connection dropped) into a cancelled context:
// a replay aborts, waiting for the confirms in flight up to the confirm
// timeout. The second tells it to stop waiting (replay.WithForce): each
// copy still in flight is named as possibly delivered twice, in the
// result and the journal. After that the signals are the runtime's again,
// so a third ends dlqt at once. stop releases the signals.
//
// A broken pipe on standard output or error (dlqt replay ... | head, a
// pipe to a session that is gone) no longer kills dlqt: the write fails
// and the action goes on to its end, which its journal records. Killed
// there, a replay left copies published whose sources it had not acked.
func Interrupts(stderr io.Writer) (context.Context, func()) {
	// Notified, SIGPIPE fails the write with EPIPE instead of ending the
	// process; nobody needs to read the channel. (Notify, not Ignore: an
	// ignored signal stays ignored in the programs dlqt starts.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, cancel := context.WithCancel(context.Background())
	force := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	// interrupted waits for a signal that interrupts, false when stop
	// came first. A SIGHUP does not while dlqt serve takes it for a
	// reload of its users (hangupReloads).
	interrupted := func() bool {
		for {
			select {
			case s := <-sigs:
				if s != syscall.SIGHUP || !hangupReloads.Load() {
					return true
				}
			case <-done:
				return false
			}
		}
	}
	go func() {
		defer signal.Stop(sigs)
		if !interrupted() {
			return
		}
		cancel()
		if interrupted() {
			fmt.Fprintln(stderr, "dlqt: interrupted again: not waiting for the confirms in flight (each such copy is named: it may be delivered twice); once more ends dlqt at once")
			close(force)
		}
	}()
	return replay.WithForce(ctx, force), func() {
		close(done)
		cancel()
	}
}

// hangupReloads is set by dlqt serve, which re-reads its users file on
// SIGHUP: there a hangup is a reload, not an interrupt.
var hangupReloads atomic.Bool
