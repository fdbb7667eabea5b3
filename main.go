// Command dlqt triages RabbitMQ dead-letter and parking queues: a full-screen
// terminal UI, and headless commands on the same engine for scripts.
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

//go:embed keymap.yaml
var defaultKeymap []byte

// exitUsage is the exit code for a command line dlqt cannot understand.
const exitUsage = 2

// usageError marks errors in how dlqt was called (exit 2), as opposed to
// failures while doing the work (exit 1).
type usageError struct{ error }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCommand().ExecuteContext(ctx)
	stop()
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "dlqt:", err)
	var ue usageError
	if errors.As(err, &ue) {
		os.Exit(exitUsage)
	}
	os.Exit(1)
}

func newRootCommand() *cobra.Command {
	a := &app{}
	root := &cobra.Command{
		Use:   "dlqt",
		Short: "Triage RabbitMQ dead-letter and parking queues",
		Long: `dlqt lists the parking queues of a RabbitMQ vhost, groups their messages by
why they died, and shows each message as a decoded, redacted envelope with
its attempt timeline. Browsing puts every message back: the only trace it
leaves is the redelivered flag (and, on quorum queues, a delivery count, which
dlqt asks about first).`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.resolve(cmd)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runTUI(cmd.Context())
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	a.bindFlags(root)
	root.AddCommand(
		a.queuesCommand(),
		a.groupsCommand(),
		a.messagesCommand(),
		a.snapshotCommand(),
		a.demoCommand(),
		a.discardCommand(),
		a.replayCommand(),
		a.journalCommand(),
		a.doctorCommand(),
	)
	return root
}
