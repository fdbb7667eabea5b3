package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// footer is what sits under the screen body: help, the status line, and the
// error and notice lines when there are any.
func (m *Model) footer() []string {
	var lines []string
	helpView := m.help.View(m.helpKeys())
	legend := m.help.ShowAll // the full help explains "?" and "-" too
	if t := m.table(); t != nil && t.Filtering() {
		legend = false
		// keys are text now: say so rather than list actions that will not fire
		helpView = m.ctx.Styles.Dim.Render("typing filters the list • enter keep filter • esc clear • ctrl+c quit")
		if m.screen == screenGroups || m.screen == screenMessages {
			helpView = m.ctx.Styles.Dim.Render("words, or fields: reason=expired died<1h • enter keep • esc clear • ctrl+c quit")
		}
	}
	if m.dialog != nil {
		helpView, legend = "", false
	}
	if helpView != "" {
		lines = append(lines, strings.Split(helpView, "\n")...)
		if legend {
			lines = append(lines, m.ctx.Styles.Dim.Render(views.Fit(views.Legend, m.width)))
		}
	}
	lines = append(lines, m.ctx.Styles.Status.Render(views.Fit(m.status(), m.width)))
	if m.busy != "" {
		lines = append(lines, m.ctx.Styles.Notice.Render(views.Fit(m.busy, m.width)))
	}
	for _, l := range m.banner() {
		lines = append(lines, m.ctx.Styles.Warn.Render(views.Fit(l, m.width)))
	}
	if m.hint != "" {
		lines = append(lines, m.ctx.Styles.Notice.Render(views.Fit(m.hint, m.width)))
	}
	if m.done != "" {
		lines = append(lines, m.ctx.Styles.Notice.Render(views.Fit("done: "+m.done, m.width)))
	}
	if m.lastErr != "" {
		for _, l := range brokenLines("error: "+m.lastErr, m.width, false) {
			lines = append(lines, m.ctx.Styles.Error.Render(l))
		}
	}
	if m.opts.Notice != "" {
		for _, l := range brokenLines("note: "+sanitize.Line(m.opts.Notice), m.width, true) {
			lines = append(lines, m.ctx.Styles.Notice.Render(l))
		}
	}
	return lines
}

// status is the bottom line: source, vhost, the snapshot's bound and the
// actor, most important first since a narrow terminal cuts the end.
func (m *Model) status() string {
	var parts []string
	source := ""
	if m.opts.Reader != nil {
		source = sanitize.Line(m.opts.Reader.Describe())
		parts = append(parts, source)
	}
	// a live reader names its vhost already; say it once
	if vh := "vhost " + sanitize.Line(m.opts.Vhost); m.opts.Vhost != "" && !strings.Contains(source, vh) {
		parts = append(parts, vh)
	}
	if m.screen != screenQueues {
		if m.browse != nil {
			parts = append(parts, "reading "+sanitize.Line(m.browse.queue)+"…")
		} else if insp := m.groups.Inspection(); insp != nil {
			parts = append(parts, views.Bound(insp.Batch))
		}
	}
	if m.opts.Actor != "" {
		parts = append(parts, "actor "+sanitize.Line(m.opts.Actor))
	}
	return " " + strings.Join(parts, " │ ")
}

func (m *Model) helpKeys() interface {
	ShortHelp() []key.Binding
	FullHelp() [][]key.Binding
} {
	switch m.screen {
	case screenQueues:
		return &m.queues
	case screenGroups:
		return &m.groups
	case screenMessages:
		return &m.messages
	case screenReplay:
		return &m.replay
	case screenJournal:
		return &m.journalV
	case screenDoctor:
		return &m.doctor
	default:
		return &m.message
	}
}

// layout pushes the body size down to every screen; the footer's height
// changes with help, errors and notices, so it runs after every update.
func (m *Model) layout() {
	m.help.SetWidth(m.width)
	h := max(m.height-len(m.footer()), 1)
	m.queues.SetSize(m.width, h)
	m.groups.SetSize(m.width, h)
	m.messages.SetSize(m.width, h)
	m.message.SetSize(m.width, h)
	m.replay.SetSize(m.width, h)
	m.journalV.SetSize(m.width, h)
	m.doctor.SetSize(m.width, h)
}

func (m *Model) body(h int) string {
	if m.dialog != nil {
		var d string
		switch dl := m.dialog.(type) {
		case costDialog:
			d = dl.view(m.ctx, m.width)
		case tagPrompt:
			d = dl.view(m.ctx, m.width)
		case reasonPrompt:
			d = dl.view(m.ctx, m.width)
		case discardConfirm:
			d = dl.view(m.ctx, m.width)
		case editPrompt:
			d = dl.view(m.ctx, m.width)
		case startConfirm:
			d = dl.view(m.ctx, m.width)
		case abortConfirm:
			d = dl.view(m.ctx, m.width, m.replay.Plan().Queue)
		case revealConfirm:
			d = dl.view(m.ctx, m.width, m.opts.Actor)
		}
		return place(m.width, h, d)
	}
	switch m.screen {
	case screenQueues:
		return m.queues.View()
	case screenGroups:
		return m.groups.View()
	case screenMessages:
		return m.messages.View()
	case screenReplay:
		return m.replay.View()
	case screenJournal:
		return m.journalV.View()
	case screenDoctor:
		return m.doctor.View()
	default:
		return m.message.View()
	}
}

// Screen renders the whole screen as a string: exactly height lines, none
// wider than width.
func (m *Model) Screen() string {
	foot := m.footer()
	h := max(m.height-len(foot), 1)
	lines := strings.Split(m.body(h), "\n")
	for len(lines) < h {
		lines = append(lines, "")
	}
	lines = append(lines[:h], foot...)
	if len(lines) > m.height {
		lines = lines[:m.height]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "…")
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
// breaks between words; an error breaks at the edge, since it is mostly URLs
// and paths and a full first line keeps its start together.
func brokenLines(s string, w int, words bool) []string {
	w = max(w, 10)
	if n := ansi.StringWidth(s); n > maxErrorLines*w {
		head := w + w/2
		tail := maxErrorLines*w - head - 1
		s = ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, n-tail, "")
	}
	broken := ansi.Hardwrap(s, w, true)
	if words {
		broken = ansi.Wrap(s, w, "")
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
