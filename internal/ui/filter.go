package ui

import (
	"context"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
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
//
// A text~ or tenant= filter over a read kept as index entries reads every
// message back from disk: it is resolved in a tea.Cmd (filter.Resolve) and
// put in force when done; the filter before it stays until then, and a
// newer line cancels it.
type fieldFilter struct {
	c      *programContext
	table  *views.Table
	set    func(filter.Filter) // the screen's own filter in force
	screen screenID
	read   func() *triage.Inspection // every message of the shown read
	work   *filterWork
}

// filterWork is the resolve in flight, shared by the copies of a bar.
type filterWork struct {
	id     int
	cancel context.CancelFunc
	text   bool // the line's plain words matched no row and are searched as text~
}

func newFieldFilter(c *programContext, t *views.Table, set func(filter.Filter), screen screenID, read func() *triage.Inspection) fieldFilter {
	return fieldFilter{c: c, table: t, set: set, screen: screen, read: read, work: &filterWork{}}
}

// filterResolvedMsg answers a resolve: the filter, ready to put in force.
type filterResolvedMsg struct {
	screen screenID
	id     int
	f      filter.Filter
	err    error
}

func (m filterResolvedMsg) owner() screenID { return m.screen }

func (f fieldFilter) list() *views.Table { return f.table }

func (fieldFilter) filterHelp() string {
	return "words, or fields: reason=expired died<1h • enter keep • esc clear • ctrl+c quit"
}

func (f fieldFilter) refilter() tea.Cmd {
	t := f.table
	words := strings.Fields(t.FilterValue())
	cmd, err := f.apply(t.FilterValue())
	if err == nil {
		t.SetFilterError("")
		t.SetFilterHint(f.hint(t.FilterValue()))
		return cmd
	}
	t.SetFilterHint("")
	t.SetFilterError(sanitize.Line(err.Error()))
	for n := len(words) - 1; n >= 0; n-- {
		if cmd, err := f.apply(strings.Join(words[:n], " ")); err == nil {
			return cmd
		}
	}
	return nil
}

// apply puts line in force when it parses, or, when it must read messages
// back first, returns the command that resolves it.
func (f fieldFilter) apply(line string) (tea.Cmd, error) {
	f.stopResolving()
	f.work.text = false
	if !hasFieldExpr(line) {
		f.set(filter.Filter{})
		f.table.SetSubstring(line)
		if strings.TrimSpace(line) == "" || f.table.Searching() || f.table.Len() > 0 {
			return nil, nil
		}
		// no row holds it: a customer or order id lives in the payload, so
		// the words are searched there (text~), as --where reads them
		f.table.SetSubstring("")
		line = strings.Join(strings.Fields(line), " ")
		f.work.text = true
	}
	opts := f.c.opts.Filter
	opts.Now = f.c.now() // died<1h is counted from the screen's clock
	if f.read != nil {
		opts.Cache = f.c.searchCacheFor(f.read())
	}
	parsed, err := filter.ParseLine(line, opts)
	if err != nil {
		return nil, err
	}
	if read := f.readBack(parsed); read != nil {
		return f.resolve(parsed, read), nil
	}
	f.set(parsed)
	return nil, nil
}

// readBack is the read parsed must read messages back from, nil when it
// can be evaluated at once.
func (f fieldFilter) readBack(parsed filter.Filter) *triage.Inspection {
	if f.read == nil || !parsed.ReadsMessages() {
		return nil
	}
	r := f.read()
	if r == nil || r.Len() == 0 || !r.At(0).Indexed() {
		return nil
	}
	return r
}

func (f fieldFilter) resolve(parsed filter.Filter, read *triage.Inspection) tea.Cmd {
	ctx, cancel := context.WithCancel(f.c.base)
	f.work.id, f.work.cancel = f.c.nextID(), cancel
	f.c.busy = "searching " + views.Plural(read.Len(), "message") + " (read back from disk)…"
	id, screen, msgs := f.work.id, f.screen, read.List()
	return func() tea.Msg {
		resolved, err := parsed.Resolve(ctx, msgs)
		return filterResolvedMsg{screen: screen, id: id, f: resolved, err: err}
	}
}

// stopResolving cancels the resolve in flight: a newer line replaces it.
func (f fieldFilter) stopResolving() {
	if f.work.cancel != nil {
		f.work.cancel()
		f.work.id, f.work.cancel = 0, nil
		f.c.busy = ""
	}
}

// onResolved puts a resolved filter in force, unless a newer line
// replaced it meanwhile.
func (f fieldFilter) onResolved(msg filterResolvedMsg) {
	if msg.id != f.work.id || f.work.cancel == nil {
		return
	}
	f.work.cancel()
	f.work.id, f.work.cancel = 0, nil
	f.c.busy = ""
	if msg.err != nil {
		f.c.setErr(msg.err)
		return
	}
	f.set(msg.f)
}

// hint is the line under the bar for plain words no row contains (apply
// searched them as text~): what was searched; when that finds nothing too,
// the screen's empty state says so. "" for anything else.
func (f fieldFilter) hint(line string) string {
	if !f.work.text {
		return ""
	}
	words := strings.Fields(line)
	quoted, text := sanitize.Line(strings.Join(words, " ")), "text~"+sanitize.Line(strings.Join(words, " text~"))
	return `no row contains "` + quoted + `": searched headers and payload (` + text + ")"
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
