package ui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// ContextChoice is one named broker context as the picker lists it: never
// its URLs, which may carry a password.
type ContextChoice struct {
	Name     string
	Vhost    string // "" is the file's default
	ReadOnly bool
}

// openContexts opens the context picker. Switching ends this TUI (Run
// hands the name back and the caller connects afresh), so it waits for a
// running discard or replay rather than cut it off.
func (m *Model) openContexts() tea.Cmd {
	c := m.c
	if len(c.opts.Contexts) == 0 {
		c.hint = "no contexts in the config file: add a contexts section to switch between brokers"
		return nil
	}
	for _, w := range c.writers {
		if w.inFlight() {
			c.hint = "switching context waits: a discard or replay is still running"
			return nil
		}
	}
	p := &contextPicker{c: c, choose: func(name string) tea.Cmd {
		m.switchTo = name
		return m.quit()
	}}
	for i, ch := range c.opts.Contexts {
		if ch.Name == c.opts.Context {
			p.cursor = i
		}
	}
	c.dialog = p
	return nil
}

// contextPicker lists the contexts; enter switches to the one under the
// cursor (the one in use only closes it), esc closes it.
type contextPicker struct {
	c      *programContext
	cursor int
	choose func(name string) tea.Cmd
}

func (p *contextPicker) Update(msg tea.Msg) (dialog, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p, nil
	}
	keys, n := p.c.Keys, len(p.c.opts.Contexts)
	switch {
	case key.Matches(k, keys.Back), key.Matches(k, keys.Cancel), key.Matches(k, keys.Quit):
		return nil, nil
	case key.Matches(k, keys.Up):
		p.cursor = max(p.cursor-1, 0)
	case key.Matches(k, keys.Down):
		p.cursor = min(p.cursor+1, n-1)
	case key.Matches(k, keys.Open):
		name := p.c.opts.Contexts[p.cursor].Name
		if name == p.c.opts.Context {
			return nil, nil
		}
		return nil, p.choose(name)
	}
	return p, nil
}

func (p *contextPicker) View(width int) string {
	st := p.c.Styles
	lines := []string{"Switch to the broker context", ""}
	for i, ch := range p.c.opts.Contexts {
		mark := " "
		if ch.Name == p.c.opts.Context {
			mark = "*"
		}
		vhost := "vhost " + sanitize.Line(ch.Vhost)
		if ch.Vhost == "" {
			vhost = "vhost (default)"
		}
		ro := ""
		if ch.ReadOnly {
			ro = "  read-only"
		}
		row := fmt.Sprintf("%s %-20s %s%s", mark, sanitize.Line(ch.Name), vhost, ro)
		if i == p.cursor {
			row = st.Selected.Render(row)
		}
		lines = append(lines, row)
	}
	lines = append(lines, "", "* in use    enter: switch (reconnects)    esc: cancel")
	return box(p.c.Context, width, lines)
}
