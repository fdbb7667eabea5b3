package ui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// fieldFilter is the filter bar of the groups and messages screens: field
// expressions (reason=expired died<1h) as --where reads them, or, with
// none, today's plain substring. A line applies when it parses completely;
// one that does not shows the parser's error under the bar and falls back
// to its longest run of whole words that parses, never to a half-typed
// word that happened to parse on the way ("reason" read as text~reason
// while "reason=bogus" was typed).
type fieldFilter struct {
	c     *programContext
	table *views.Table
	set   func(filter.Filter) // the screen's own filter in force
}

func newFieldFilter(c *programContext, t *views.Table, set func(filter.Filter)) fieldFilter {
	return fieldFilter{c: c, table: t, set: set}
}

func (f fieldFilter) list() *views.Table { return f.table }

func (fieldFilter) filterHelp() string {
	return "words, or fields: reason=expired died<1h • enter keep • esc clear • ctrl+c quit"
}

func (f fieldFilter) refilter() {
	t := f.table
	words := strings.Fields(t.FilterValue())
	err := f.apply(t.FilterValue())
	if err == nil {
		t.SetFilterError("")
		return
	}
	t.SetFilterError(sanitize.Line(err.Error()))
	for n := len(words) - 1; n >= 0; n-- {
		if f.apply(strings.Join(words[:n], " ")) == nil {
			return
		}
	}
}

// apply puts line in force when it parses.
func (f fieldFilter) apply(line string) error {
	if !hasFieldExpr(line) {
		f.set(filter.Filter{})
		f.table.SetSubstring(line)
		return nil
	}
	opts := f.c.opts.Filter
	opts.Now = f.c.now() // died<1h is counted from the screen's clock
	parsed, err := filter.ParseLine(line, opts)
	if err != nil {
		return err
	}
	f.set(parsed)
	return nil
}

// hasFieldExpr reports a line with at least one FIELD OP VALUE word; a
// line of plain words stays a substring filter, as it always was.
func hasFieldExpr(line string) bool {
	for _, w := range strings.Fields(line) {
		if strings.ContainsAny(w, "=!~<>") {
			return true
		}
	}
	return false
}

// narrower is a screen whose field filter is put in force in steps (the
// groups screen regroups every message read).
type narrower interface{ SearchCmd() tea.Cmd }

// searchSteps are the next steps of the filters still searching their
// rows, one per list. A key searches only a slice of a large list; each
// further slice runs in an Update of its own, so the keys typed meanwhile
// come in between, and a key that replaces the search drops its steps.
func searchSteps(screens []screen) tea.Cmd {
	var cmds []tea.Cmd
	for _, s := range screens {
		if l, ok := s.(lister); ok {
			if t := l.list(); t != nil {
				cmds = append(cmds, t.SearchCmd())
			}
		}
		if n, ok := s.(narrower); ok {
			cmds = append(cmds, n.SearchCmd())
		}
	}
	return tea.Batch(cmds...)
}

// continueSearch runs a search's next step. A read narrowed by the groups'
// filter in steps that has just come on screen is taken up by the messages
// screens, as a read is when it arrives.
func (m *Model) continueSearch(step views.SearchStep) {
	step.Continue()
	if m.groups.NewRead() {
		m.flow.reselect()
	}
}
