// Package views holds one Bubble Tea model per dlqt screen. Views only
// render domain values handed to them and report what the user selected; they
// never call the broker or the journal (internal/ui does, off the Update loop).
package views

import (
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// Context is what every view shares with the root: the keymap, the styles
// and the clock. The root owns it and hands the same pointer to each view, so
// a theme change reaches every screen at once.
type Context struct {
	Keys   KeyMap
	Styles Styles
	// Now is the clock used for ages ("3m ago"); tests fix it so screens are
	// reproducible.
	Now func() time.Time
	// Owner names the team owning a group of a queue (the config's owners
	// section); nil when there is none, and the groups screen has no owner
	// column.
	Owner func(queue string, g triage.Group) string
	// Fresh is how old a number may be before it says so: the queues
	// screen's poll interval (0: DefaultFresh).
	Fresh time.Duration
	// Redactor masks secrets in the short strings the lists show (reason
	// codes, event types) as it does in payloads; nil masks nothing.
	Redactor *redact.Redactor
	// TraceURL is the config's trace_url: the message page links a trace
	// id to it. Hyperlinks says the terminal takes OSC 8 links; without
	// it the link is shown as plain text.
	TraceURL   triage.TraceURL
	Hyperlinks bool
}

// shown is a short broker string as a list shows it: redacted and
// sanitised (triage.ShownLine), "-" when empty.
func (c *Context) shown(s string) string {
	text, _ := triage.ShownLine(c.Redactor, s)
	return orDash(text)
}

// DefaultFresh is the queues screen's default poll interval, which the
// management API's statistics interval (5 s) makes the freshest a depth is.
const DefaultFresh = 5 * time.Second

// readAgo marks numbers read at `at` with their age once they are older
// than a refresh would keep them (" · read 40s ago"), else "": one marker
// per screen or section, not one per cell, so a screen stays readable.
func (c *Context) readAgo(at time.Time) string {
	fresh := c.Fresh
	if fresh <= 0 {
		fresh = DefaultFresh
	}
	if at.IsZero() || c.now().Sub(at) < fresh {
		return ""
	}
	return " · read " + Age(c.now().Sub(at)) + " ago"
}

func (c *Context) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}
