package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/dlqt/dlqt/internal/triage/replay"
)

// Interrupts turns the first Ctrl-C or SIGTERM into a cancelled context:
// a replay aborts, waiting for the confirms in flight up to the confirm
// timeout. The second tells it to stop waiting (replay.WithForce): each
// copy still in flight is named as possibly delivered twice, in the
// result and the journal. After that the signals are the runtime's again,
// so a third ends dlqt at once. stop releases the signals.
func Interrupts(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	force := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		defer signal.Stop(sigs)
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			fmt.Fprintln(stderr, "dlqt: interrupted again: not waiting for the confirms in flight (each such copy is named: it may be delivered twice); once more ends dlqt at once")
			close(force)
		case <-done:
		}
	}()
	return replay.WithForce(ctx, force), func() {
		close(done)
		cancel()
	}
}
