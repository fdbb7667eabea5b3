package ui

import (
	"strings"

	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// fieldFilter is the filter bar of the groups and messages screens: field
// expressions (reason=expired died<1h) as --where reads them, or, with
// none, today's plain substring. A line that does not parse shows the
// parser's error under the bar and keeps the last good filter.
type fieldFilter struct {
	c     *programContext
	table *views.Table
	set   func(filter.Filter) // the screen's own filter in force
}

func (f fieldFilter) list() *views.Table { return f.table }

func (fieldFilter) filterHelp() string {
	return "words, or fields: reason=expired died<1h • enter keep • esc clear • ctrl+c quit"
}

func (f fieldFilter) refilter() {
	t := f.table
	line := t.FilterValue()
	if !hasFieldExpr(line) {
		t.SetFilterError("")
		f.set(filter.Filter{})
		t.SetSubstring(line)
		return
	}
	opts := f.c.opts.Filter
	opts.Now = f.c.now() // died<1h is counted from the screen's clock
	parsed, err := filter.ParseLine(line, opts)
	if err != nil {
		t.SetFilterError(sanitize.Line(err.Error()))
		return
	}
	t.SetFilterError("")
	f.set(parsed)
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
