package ui

import (
	"strings"

	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// refilter puts the filter bar's line in force on the groups and messages
// screens: field expressions (reason=expired died<1h) as --where reads
// them, or, with none, today's plain substring. A line that does not parse
// shows the parser's error under the bar and keeps the last good filter.
func (m *Model) refilter() {
	if m.screen != screenGroups && m.screen != screenMessages {
		return
	}
	t := m.table()
	line := t.FilterValue()
	if !hasFieldExpr(line) {
		t.SetFilterError("")
		m.setScreenFilter(filter.Filter{})
		t.SetSubstring(line)
		return
	}
	opts := m.opts.Filter
	opts.Now = m.now() // died<1h is counted from the screen's clock
	f, err := filter.ParseLine(line, opts)
	if err != nil {
		t.SetFilterError(sanitize.Line(err.Error()))
		return
	}
	t.SetFilterError("")
	m.setScreenFilter(f)
}

func (m *Model) setScreenFilter(f filter.Filter) {
	if m.screen == screenGroups {
		m.groups.SetFilter(f)
		return
	}
	m.messages.SetFilter(f)
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
