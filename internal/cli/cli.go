// Package cli is dlqt's command line: the cobra commands, how flags, the
// environment and the config file decide the settings, and the headless
// output (the JSON contract and the plain tables) for scripts and people.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Assets are the files the binary embeds: the default key bindings and the
// bundled demo snapshot.
type Assets struct {
	Keymap       []byte // keymap.yaml
	DemoSnapshot []byte // testdata/demo.snapshot.json
}

// Exit codes: 0 done, 1 the work failed, 2 dlqt could not understand the
// command line, 3 the action became a proposal that waits for approval, 4
// the action did what it read, but a bound it did not choose cut its read
// of a group short.
const (
	exitFailure = 1
	exitUsage   = 2
	// exitProposal: the action needs a second person; a proposal was
	// journaled and nothing moved (approval.go).
	exitProposal = 3
	// exitPartial: a group's replay or discard read only part of the
	// queue (the memory budget, the broker's headroom): done for what it
	// read, the rest untouched (partialRead).
	exitPartial = 4
)

// usageError marks errors in how dlqt was called (exit 2), as opposed to
// failures while doing the work (exit 1).
type usageError struct{ error }

// Main runs dlqt with args (without the program name) and returns the exit
// code; an error is one line on stderr.
func Main(ctx context.Context, args []string, assets Assets, stdout, stderr io.Writer) int {
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	a := &app{assets: assets, stderr: stderr}
	root := rootCommandOf(a)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	a.closeTrail()
	if err != nil {
		fmt.Fprintln(stderr, errorLine(err))
	}
	return exitCode(err)
}

// errorLine is how an error ends dlqt on stderr. Errors carry broker text
// (a replay stopped by a failed-again message names its id, a hold's read
// the broker's reason), and not every path sanitised it before: the line
// is sanitised here, where every error leaves. Text already sanitised
// reads the same (an escape is shown as plain characters).
func errorLine(err error) string {
	return "dlqt: " + sanitize.Text(err.Error())
}

// exitCode is 0 for success, exitUsage for a usage error, else exitFailure.
func exitCode(err error) int {
	var ue usageError
	var pm proposalMade
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &pm):
		return exitProposal
	case errors.As(err, new(partialRead)):
		return exitPartial
	}
	return exitFailure
}

// unknownCommand refuses arguments to dlqt itself: the first one names a
// command dlqt does not have, a usage error (exit 2) like a bad flag.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return usageError{fmt.Errorf("unknown command %q (dlqt --help lists the commands)", args[0])}
}

// rootCommandOf is dlqt's command tree acting through a.
func rootCommandOf(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "dlqt",
		Short: "Triage RabbitMQ dead-letter and parking queues",
		Long: `dlqt lists the parking queues of a RabbitMQ vhost, groups their messages by
why they died, and shows each message as a decoded, redacted envelope with
its attempt timeline. Browsing puts every message back: the only trace it
leaves is the redelivered flag (and, on quorum queues before RabbitMQ 4.3, a
delivery count, which dlqt asks about first).`,
		Args:          unknownCommand,
		Version:       buildVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.resolve(cmd)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runTUI(cmd)
		},
	}
	root.SetVersionTemplate("dlqt {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	a.bindFlags(root)
	root.AddCommand(
		a.queuesCommand(),
		a.groupsCommand(),
		a.messagesCommand(),
		a.snapshotCommand(),
		a.demoCommand(),
		a.discardCommand(),
		a.quarantineCommand(),
		a.fullScanCommand(),
		a.replayCommand(),
		a.journalCommand(),
		a.doctorCommand(),
		a.contextsCommand(),
		a.proposalsCommand(),
		a.approveCommand(),
		a.rejectCommand(),
		a.runCommand(),
		a.editCommand(),
		a.serveCommand(),
	)
	return root
}

// partialRead says that an action on a group or a filter read only the
// first read of depth messages of queue, cut by bound (not by --limit):
// what it did covers those, and the rest of the queue was not looked at.
type partialRead struct {
	action, queue string
	read, depth   int
	bound         string
}

func (p partialRead) Error() string {
	return fmt.Sprintf("%s read only the first %d of the %d messages of %s (%s): the selection may go on past them, and the other %d were not looked at; run it again for them",
		p.action, p.read, p.depth, sanitize.Line(p.queue), sanitize.Line(p.bound), p.depth-p.read)
}

// cutShort is the partialRead of action over what read b, when sel is a
// group or a filter and a bound dlqt did not choose (the memory budget,
// the broker's headroom; not --limit) cut the read; nil otherwise. (Held
// by another reader is not counted: that figure comes from the management
// API's statistics, up to 5 s old, and right after a replay moved
// messages out it named 7,306 of 12,300 that were gone.)
func cutShort(action, queue string, sel triage.Selection, b triage.Batch) error {
	if len(sel.IDs) > 0 || !b.Truncated() || b.Bound == "" {
		return nil
	}
	return partialRead{action: action, queue: queue, read: b.Count(), depth: b.Depth, bound: b.Bound}
}
