package ui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// footer is what sits under the screen body: help, the status line, and the
// error and notice lines when there are any.
func (m *Model) footer() []string {
	c := m.c
	st := c.Styles
	var lines []string
	helpView := m.helpView()
	legend := m.help.ShowAll // the full help explains "?" and "-" too
	if m.typing() {
		// keys are text now: say so rather than list actions that will not fire
		helpView, legend = st.Dim.Render(m.focused().(lister).filterHelp()), false
	}
	if c.dialog != nil {
		helpView, legend = "", false
	}
	if helpView != "" {
		lines = append(lines, strings.Split(helpView, "\n")...)
		if legend {
			lines = append(lines, st.Dim.Render(views.Fit(views.Legend, c.width)))
		}
	}
	lines = append(lines, st.Status.Render(views.Fit(m.status(), c.width)))
	if c.busy != "" {
		lines = append(lines, st.Notice.Render(views.Fit(c.busy, c.width)))
	}
	for _, l := range m.replay.banner() {
		lines = append(lines, st.Warn.Render(views.Fit(l, c.width)))
	}
	if c.hint != "" {
		lines = append(lines, st.Notice.Render(views.Fit(c.hint, c.width)))
	}
	if c.done != "" {
		lines = append(lines, st.Notice.Render(views.Fit("done: "+c.done, c.width)))
	}
	if c.lastErr != "" {
		for _, l := range brokenLines("error: "+c.lastErr, c.width, false) {
			lines = append(lines, st.Error.Render(l))
		}
	}
	if c.opts.Notice != "" {
		for _, l := range brokenLines("note: "+sanitize.Line(c.opts.Notice), c.width, true) {
			lines = append(lines, st.Notice.Render(l))
		}
	}
	return lines
}

// helpView is the focused screen's help: each binding once, and the quit key
// always on the short line, which sheds the bindings before it instead.
func (m *Model) helpView() string {
	keys := helpKeys{m.focused()}
	if m.help.ShowAll {
		return m.help.FullHelpView(keys.FullHelp())
	}
	short := keys.ShortHelp()
	whole := m.help // measured uncut: the help cuts at its width itself
	whole.SetWidth(0)
	for len(short) > 1 {
		v := whole.ShortHelpView(short)
		if ansi.StringWidth(v) <= m.c.width {
			return v
		}
		short = append(short[:len(short)-2], short[len(short)-1])
	}
	return m.help.ShortHelpView(short)
}

// helpKeys is a screen's help with each key listed once: screens compose
// their full help from shared groups (navigation, general), which overlap.
type helpKeys struct{ help.KeyMap }

func (h helpKeys) ShortHelp() []key.Binding {
	return uniqueBindings(h.KeyMap.ShortHelp(), map[string]bool{})
}

func (h helpKeys) FullHelp() [][]key.Binding {
	seen := map[string]bool{}
	var out [][]key.Binding
	for _, col := range h.KeyMap.FullHelp() {
		if col = uniqueBindings(col, seen); len(col) > 0 {
			out = append(out, col)
		}
	}
	return out
}

// uniqueBindings drops the enabled bindings whose keys are in seen, and
// adds the rest to it.
func uniqueBindings(bs []key.Binding, seen map[string]bool) []key.Binding {
	var out []key.Binding
	for _, b := range bs {
		if !b.Enabled() {
			continue
		}
		id := strings.Join(b.Keys(), " ") + "\x00" + b.Help().Desc
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, b)
	}
	return out
}

// status is the bottom line: source, broker version, vhost, the snapshot's
// bound and the actor, most important first since a narrow terminal cuts
// the end.
func (m *Model) status() string {
	o := m.c.opts
	var parts []string
	if o.Context != "" { // first: with two clusters open, which one is this
		parts = append(parts, "context "+sanitize.Line(o.Context))
	}
	source := ""
	if o.Reader != nil {
		source = sanitize.Line(o.Reader.Describe())
		parts = append(parts, source)
	}
	if v := m.c.broker.Version; v.Known() {
		parts = append(parts, "RabbitMQ "+v.String())
	}
	// a live reader names its vhost already; say it once
	if vh := "vhost " + sanitize.Line(o.Vhost); o.Vhost != "" && !strings.Contains(source, vh) {
		parts = append(parts, vh)
	}
	if m.showsRead() {
		if r := m.flow.reading(); r != "" {
			parts = append(parts, r)
		}
	}
	if c := m.c.check.statusPart(); c != "" {
		parts = append(parts, c)
	}
	if o.Actor != "" {
		parts = append(parts, "actor "+sanitize.Line(o.Actor))
	}
	if o.Role != "" {
		parts = append(parts, sanitize.Line(o.Role))
	}
	return " " + strings.Join(parts, " │ ")
}

// showsRead reports a screen that shows (or acts on) what the browse read,
// so its bound belongs on the status line; the doctor's and the journal's
// do not.
func (m *Model) showsRead() bool {
	switch m.c.focus {
	case screenGroups, screenMessages, screenMessage, screenReplay:
		return true
	}
	return false
}

// layout pushes the body size down to every screen; the footer's height
// changes with help, errors and notices, so it runs after every update.
func (m *Model) layout() {
	m.help.SetWidth(m.c.width)
	h := max(m.c.height-len(m.footer()), 1)
	for _, s := range m.screens {
		s.SetSize(m.c.width, h)
	}
}

func (m *Model) body(h int) string {
	if d := m.c.dialog; d != nil {
		return place(m.c.width, h, d.View(m.c.width))
	}
	return m.focused().View()
}

// Screen renders the whole screen as a string: exactly height lines, none
// wider than width.
func (m *Model) Screen() string {
	foot := m.footer()
	h := max(m.c.height-len(foot), 1)
	lines := strings.Split(m.body(h), "\n")
	for len(lines) < h {
		lines = append(lines, "")
	}
	lines = append(lines[:h], foot...)
	if len(lines) > m.c.height {
		lines = lines[:m.c.height]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.c.width, "…")
	}
	return strings.Join(lines, "\n")
}

// View is the only tea.View of the program: full screen, in the alt screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Screen())
	v.AltScreen = true
	v.WindowTitle = "dlqt"
	return v
}

// maxErrorLines bounds the error and notice blocks: the cause of a broker
// error (or why the demo opened) is often at the end of the line, so it
// wraps instead of being cut at the edge.
const maxErrorLines = 3

// brokenLines breaks an error or notice line at the width, at most
// maxErrorLines. When it is longer still, the middle goes ("…"): the start
// says what dlqt was doing, the end says why it failed. Prose (a notice)
// breaks between words; so does an error that fits its lines that way, and
// one that does not breaks at the edge, since it is mostly URLs and paths
// and every cell of its lines then counts.
func brokenLines(s string, w int, words bool) []string {
	w = max(w, 10)
	if n := ansi.StringWidth(s); n > maxErrorLines*w {
		head := w + w/2
		tail := maxErrorLines*w - head - 1
		s = ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, n-tail, "")
	}
	broken := ansi.Wrap(s, w, "")
	if !words && strings.Count(broken, "\n") >= maxErrorLines {
		broken = ansi.Hardwrap(s, w, true) // an error too long for words: every cell counts
	}
	lines := strings.Split(broken, "\n")
	if len(lines) > maxErrorLines { // words can need a line more than cells do
		lines = lines[:maxErrorLines]
		lines[maxErrorLines-1] = ansi.Truncate(lines[maxErrorLines-1], w-1, "") + "…"
	}
	for i, l := range lines {
		lines[i] = views.Fit(l, w)
	}
	return lines
}
