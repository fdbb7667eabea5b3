package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Access is what the user's broker permissions leave of the actions,
// checked once as the TUI starts: the reason discard or replay is off, ""
// when nothing rules it out.
type Access struct {
	Discard, Replay string
	// Fix is the rabbitmqctl line that grants what is missing.
	Fix string
	// Note says what could not be checked ("could not check permissions:
	// …"); nothing is assumed of it.
	Note string
	// Trail says why the team's audit stream could not take an entry
	// as the TUI started ("" when it could, or none is configured).
	// Nothing is turned off (it may be back by the first action, which
	// is refused if it is not); the responder knows before choosing one.
	Trail string
}

// accessMsg is the answer of Options.CheckAccess.
type accessMsg Access

// accessCheckWait bounds the permission check; a broker that does not
// answer in time leaves every action on, said as a note.
const accessCheckWait = 15 * time.Second

// checkAccess asks the broker what the user may do, off the Update loop.
// A read-only TUI has nothing to check.
func (c *programContext) checkAccess() tea.Cmd {
	if c.opts.CheckAccess == nil || c.opts.ReadOnly {
		return nil
	}
	check, base := c.opts.CheckAccess, c.base
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(base, accessCheckWait)
		defer cancel()
		return accessMsg(check(ctx))
	}
}

// deniedKey is a key the user's permissions took away, with why.
type deniedKey struct {
	b   key.Binding
	why string
}

// useAccess takes the actions the permissions rule out out of the keymap
// (help no longer lists them; their keys say why) and says so under the
// status line for the rest of the session.
func (m *Model) useAccess(acc Access) {
	c := m.c
	c.access = acc
	off := func(why string, bs ...*key.Binding) {
		for _, b := range bs {
			if b.Enabled() {
				m.denied = append(m.denied, deniedKey{b: key.NewBinding(key.WithKeys(b.Keys()...)), why: why})
				b.SetEnabled(false)
			}
		}
	}
	k := &c.Keys
	if acc.Discard != "" {
		off("discard is off: "+acc.Discard, &k.Discard)
	}
	if acc.Replay != "" {
		off("replay is off: "+acc.Replay, &k.Replay, &k.ResumeReplay)
	}
	var say []string
	switch {
	case acc.Discard != "" && acc.Replay == acc.Discard:
		say = append(say, "read-only: "+acc.Discard)
	case acc.Discard != "" && acc.Replay != "":
		say = append(say, "read-only: "+acc.Discard+"; and "+acc.Replay)
	case acc.Discard != "":
		say = append(say, "discard is off: "+acc.Discard)
	case acc.Replay != "":
		say = append(say, "replay is off: "+acc.Replay)
	}
	if len(say) > 0 && acc.Fix != "" {
		say = append(say, "grant it: "+acc.Fix)
	}
	if acc.Note != "" {
		say = append(say, acc.Note)
	}
	if acc.Trail != "" { // first: it stops every action, not one
		say = append([]string{"the trail is offline (" + sanitize.Line(acc.Trail) + "): every action is refused while it is; reading works"}, say...)
	}
	if len(say) > 0 {
		c.opts.Notice = strings.TrimPrefix(c.opts.Notice+"; "+strings.Join(say, "; "), "; ")
	}
}

// deniedWhy is why k does nothing, when the permissions took its action.
func (m *Model) deniedWhy(k tea.KeyPressMsg) string {
	for _, d := range m.denied {
		if key.Matches(k, d.b) {
			return d.why
		}
	}
	return ""
}

// accessDenied refuses an action the permissions rule out, on the code
// path itself, so a dialog opened before the check answered stops too.
func (c *programContext) accessDenied(action string) error {
	why := ""
	switch action {
	case "discard":
		why = c.access.Discard
	case "replay", "resuming a replay":
		why = c.access.Replay
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("%s is off: %s", action, why)
}
