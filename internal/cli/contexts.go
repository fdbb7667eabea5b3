package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/ui"
)

// brokerContext is one named broker connection of the config file, as
// kubectl and k9s have them: a responder often watches two clusters.
type brokerContext struct {
	AMQPURL  string `yaml:"amqp_url"`
	MgmtURL  string `yaml:"mgmt_url"`
	Vhost    string `yaml:"vhost"`
	ReadOnly bool   `yaml:"read_only"`
	TraceURL string `yaml:"trace_url"` // over the top level's
	// AuditStream is the context's audit stream, over the top level's.
	AuditStream string `yaml:"audit_stream"`
	// TLS, user, password and token sources, connect_timeout
	connSettings `yaml:",inline"`
}

// chooseContext picks the context named by --context, else DLQT_CONTEXT,
// else the file's current_context, and lays its settings over the file's
// top-level ones (flags and DLQT_* variables still win over both). No name
// is no context; an unknown name is an error listing the known ones.
func chooseContext(flag string, fc *fileConfig, configPath string) (string, error) {
	name := flag
	if name == "" {
		name = os.Getenv("DLQT_CONTEXT")
	}
	if name == "" {
		name = fc.CurrentContext
	}
	if name == "" {
		return "", nil
	}
	c, ok := fc.Contexts[name]
	if !ok {
		known := "none are defined"
		if names := contextNames(fc); len(names) > 0 {
			known = "known: " + strings.Join(names, ", ")
		}
		return "", fmt.Errorf("context %q is not in %s (%s)", name, configPath, known)
	}
	for _, v := range []struct{ from, to *string }{{&c.AMQPURL, &fc.AMQPURL}, {&c.MgmtURL, &fc.MgmtURL}, {&c.Vhost, &fc.Vhost}, {&c.TraceURL, &fc.TraceURL}, {&c.AuditStream, &fc.AuditStream}} {
		if *v.from != "" {
			*v.to = *v.from
		}
	}
	fc.ReadOnly = fc.ReadOnly || c.ReadOnly
	fc.connSettings = c.connSettings.over(fc.connSettings)
	return name, nil
}

func contextNames(fc *fileConfig) []string {
	names := make([]string, 0, len(fc.Contexts))
	for n := range fc.Contexts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (a *app) contextsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "contexts",
		Short: "List the named broker contexts of the config file; * marks the one in use",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fc, err := loadFileConfig(a.configPath, false)
			if err != nil {
				return usageError{err}
			}
			names := contextNames(&fc)
			if len(names) == 0 {
				return errors.New("no contexts in " + a.configPath + ": add a contexts section (see dlqt --help and the README)")
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "\tNAME\tAMQP URL\tMANAGEMENT URL\tVHOST\tREAD-ONLY")
			for _, n := range names {
				c, mark := fc.Contexts[n], ""
				if n == a.context {
					mark = "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\n", mark, n, redactedURL(c.AMQPURL), redactedURL(c.MgmtURL), orDash(c.Vhost), c.ReadOnly)
			}
			return tw.Flush()
		},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// contextChoices are the contexts the TUI's switcher lists, by name,
// without their URLs (which may carry a password).
func (a *app) contextChoices() []ui.ContextChoice {
	fc := fileConfig{Contexts: a.contexts}
	var out []ui.ContextChoice
	for _, n := range contextNames(&fc) {
		c := a.contexts[n]
		out = append(out, ui.ContextChoice{Name: n, Vhost: c.Vhost, ReadOnly: c.ReadOnly})
	}
	return out
}

// useContext switches to the named context, as the TUI's switcher asks.
// The user picked it by name just now, so its broker, management URL and
// vhost win over the flags and DLQT_* variables that chose the first one
// (then the file's top level, then the defaults). Read-only mode set by
// --read-only or DLQT_READ_ONLY stays; else the context's read_only applies.
func (a *app) useContext(cmd *cobra.Command, name string) error {
	fc, err := loadFileConfig(a.configPath, false)
	if err != nil {
		return usageError{err}
	}
	if a.context, err = chooseContext(name, &fc, a.configPath); err != nil {
		return usageError{err}
	}
	a.contexts = fc.Contexts
	if a.traceURL, err = triage.ParseTraceURL(fc.TraceURL); err != nil {
		return usageError{fmt.Errorf("config %s: %w", a.configPath, err)}
	}
	a.amqpURL = firstSet(fc.AMQPURL, broker.DefaultAMQPURL)
	a.mgmtURL = firstSet(fc.MgmtURL, broker.DefaultMgmtURL)
	a.vhost = firstSet(fc.Vhost, urlVhostOr(a.amqpURL, "/"))
	if err := a.resolveConn(cmd, fc.connSettings, true); err != nil {
		return err
	}
	// a context is a live broker: the demo, a snapshot and the first
	// broker's --queue do not carry over to it
	a.demo, a.snapshotPath, a.queue = false, "", ""
	// a.readOnly still holds what --read-only said when the flag was given
	a.readOnly, err = readOnlySetting(cmd, a.readOnly, fc.ReadOnly)
	return err
}

func firstSet(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
