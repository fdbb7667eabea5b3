package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage/doctor"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

func (a *app) doctorCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Check the vhost's dead-letter topology for ways it loses or endlessly recycles messages",
		Long: `doctor reads the whole vhost (queues with their effective arguments and
policies, exchanges, bindings) and reports each topology bug it finds, most
urgent first, with what it does and how to fix it:

  error    dlx-cycle-silent-drop   a dead-letter loop with no rejection on
                                   it: the broker drops its messages
  error    dlx-cycle-infinite      a loop with a rejection and no delay on it:
                                   a failing message spins forever
  error    dlx-missing-exchange    a queue's dead-letter exchange is missing
  error    dlx-unroutable          its dead letters match no binding: they
                                   die a second time
  error    retry-route-mismatch    a retry queue's routing key reaches no
                                   queue, so retries are lost
  warning  dlx-cycle-infinite      a retry loop through a TTL queue: it ends
                                   only if the consumer counts x-death
  warning  maxlen-without-dlx      a length limit deletes the oldest messages
  warning  parking-has-consumers   something consumes a parking queue
  warning  parking-loses-messages  a parking queue with a TTL, a length limit
                                   or a quorum delivery limit
  advisory dlx-by-argument         a DLX set by queue argument: only deleting
                                   and redeclaring the queue can change it
  advisory parking-by-name         a queue no dead-letter exchange feeds is
                                   listed as parking by its name; says which
                                   pattern (NServiceBus error, MassTransit
                                   _error, Spring .dlq, ...)
  warning  permission-missing      the user lacks a permission discard,
                                   replay, fullscan or a browse needs (one
                                   finding each, with the rabbitmqctl line)
  advisory permissions-unchecked   the user's permissions could not be
                                   checked: nothing is assumed

It reads the broker, a --snapshot file or the --demo the same way, and changes
nothing. On a broker it also checks the user's permissions: an administrator's
are read; anyone else's are tried with changes that leave nothing behind (a
lease-named queue of its own declared and deleted, a publish rolled back). Exit status: 0 when no finding is an error (warnings and advisories
included), 1 when at least one is, or when the topology could not be read
(then nothing is printed on stdout), 2 for a bad command line.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, done, err := a.openReader(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			findings, top, err := doctor.Run(cmd.Context(), r, a.patterns)
			if err != nil {
				return err
			}
			if live, ok := r.(*broker.Live); ok {
				findings = append(findings, permissionFindings(live.Permissions(cmd.Context(), top, a.patterns))...)
			}
			findings = doctor.Shown(findings, a.redactor())
			out := cmd.OutOrStdout()
			if asJSON {
				err = writeFindingsJSON(out, findings)
			} else {
				err = printFindings(out, top.Vhost, findings)
			}
			if err != nil {
				return err
			}
			if n := countSeverity(findings, doctor.SeverityError); n > 0 {
				return fmt.Errorf("doctor found %d error-severity finding(s) in vhost %s", n, sanitize.Line(top.Vhost))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of {kind, severity, queue, exchange, detail, fix}")
	return cmd
}

func countSeverity(fs []doctor.Finding, severity string) int {
	n := 0
	for _, f := range fs {
		if f.Severity == severity {
			n++
		}
	}
	return n
}

// printFindings writes one block per finding, severity word first, the
// detail and the fix wrapped for an 80-column terminal.
func printFindings(w io.Writer, vhost string, fs []doctor.Finding) error {
	vhost = sanitize.Line(vhost)
	if len(fs) == 0 {
		_, err := fmt.Fprintf(w, "vhost %s: no findings. Every dead letter has somewhere to go and parking queues keep what they get.\n", vhost)
		return err
	}
	fmt.Fprintf(w, "vhost %s: %d finding(s): %d error, %d warning, %d advisory\n", vhost, len(fs),
		countSeverity(fs, doctor.SeverityError), countSeverity(fs, doctor.SeverityWarning), countSeverity(fs, doctor.SeverityAdvisory))
	for _, f := range fs {
		head := strings.ToUpper(f.Severity) + "  " + f.Kind
		if f.Queue != "" {
			head += "  queue " + sanitize.Line(f.Queue)
		}
		if f.Exchange != "" {
			head += "  exchange " + sanitize.Line(f.Exchange)
		}
		fmt.Fprintf(w, "\n%s\n", head)
		fmt.Fprint(w, wrapIndented(sanitize.Line(f.Detail), "  ", 78))
		// a command is never wrapped, so it pastes into a shell as it is
		prose, commands := views.SplitCommands(sanitize.Line(f.Fix))
		fmt.Fprint(w, wrapIndented("Fix: "+prose, "  ", 78))
		for _, c := range commands {
			fmt.Fprintf(w, "    $ %s\n", c)
		}
	}
	return nil
}

// wrapIndented breaks text between words into lines of at most width
// terminal cells (a longer word gets a line of its own), each after indent.
func wrapIndented(text, indent string, width int) string {
	var b strings.Builder
	line, cells := indent, ansi.StringWidth(indent)
	for _, word := range strings.Fields(text) {
		w := ansi.StringWidth(word)
		if line != indent && cells+1+w > width {
			b.WriteString(line + "\n")
			line, cells = indent, ansi.StringWidth(indent)
		}
		if line != indent {
			line += " "
			cells++
		}
		line += word
		cells += w
	}
	if line != indent {
		b.WriteString(line + "\n")
	}
	return b.String()
}
