package views

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Column describes one table column. Width is the fixed width, or the
// minimum when Flex > 0: flexible columns share what the fixed ones leave,
// in proportion to Flex.
type Column struct {
	Title string
	Width int
	Flex  int
	Right bool // numbers
	// Middle cuts a long cell in its middle, keeping the tail (ids).
	Middle bool
	// Shed is the order in which columns give way when the minimum widths
	// do not fit: the highest goes first; 0 never goes.
	Shed int
}

// Table is the scrolling, filterable list under every list screen. It is
// ours rather than bubbles/table because the selection must show without
// colour (a "›" marker), cells must truncate with "…", and the filter must
// keep indexes into the caller's rows.
type Table struct {
	ctx     *Context
	cols    []Column
	rows    [][]string // cells, already sanitised by the screen
	visible []int      // indexes into rows that pass the filter
	cursor  int        // index into visible
	offset  int        // first visible row drawn
	width   int
	height  int

	filter    textinput.Model
	filtering bool // the input is focused and takes every key
	// managed tables (groups, messages) leave the filter in force to their
	// screen, which reads field expressions; others filter by substring as
	// the user types.
	managed bool
	query   string             // the substring filter in force
	matcher func(row int) bool // a field filter in force; nil: substring
	// filterErr is the parser's one line under the bar; the last good
	// filter stays in force meanwhile.
	filterErr string
	styleOf   func(row int) (lipgloss.Style, bool) // a row's own colour, if any
}

func newTable(ctx *Context, cols []Column) Table {
	in := textinput.New()
	in.Prompt = "/ "
	in.Placeholder = "filter"
	in.SetStyles(ctx.Styles.Input)
	return Table{ctx: ctx, cols: cols, filter: in}
}

// newManagedTable is a table whose screen decides the filter in force
// (SetSubstring, or a matcher of its own).
func newManagedTable(ctx *Context, cols []Column) Table {
	t := newTable(ctx, cols)
	t.managed = true
	return t
}

// SetSubstring puts a plain substring filter in force.
func (t *Table) SetSubstring(q string) {
	t.query, t.matcher = q, nil
	t.applyFilter()
}

// filterBy puts a field filter in force: match says which rows pass.
func (t *Table) filterBy(match func(row int) bool) {
	t.query, t.matcher = "", match
	t.applyFilter()
}

// SetFilterError shows the parser's error under the bar ("" clears it).
func (t *Table) SetFilterError(s string) { t.filterErr = s }

// FilterError is the error shown under the bar.
func (t *Table) FilterError() string { return t.filterErr }

// Shown reports whether the underlying row i passes the filter.
func (t *Table) Shown(i int) bool {
	for _, r := range t.visible {
		if r == i {
			return true
		}
	}
	return false
}

// SetColumns replaces the columns (a quorum queue adds one).
func (t *Table) SetColumns(cols []Column) { t.cols = cols }

// SetRows replaces the rows, keeping the selection on the same underlying
// row when it is still there.
func (t *Table) SetRows(rows [][]string) {
	sel, ok := t.Selected()
	t.rows = rows
	t.applyFilter()
	if ok {
		t.Select(sel)
	}
}

// Len is the number of rows shown after filtering, and Total before.
func (t *Table) Len() int   { return len(t.visible) }
func (t *Table) Total() int { return len(t.rows) }

// Selected is the index (into the rows given to SetRows) under the cursor.
func (t *Table) Selected() (int, bool) {
	if t.cursor < 0 || t.cursor >= len(t.visible) {
		return 0, false
	}
	return t.visible[t.cursor], true
}

// Select moves the cursor to the underlying row i when it is visible.
func (t *Table) Select(i int) {
	for c, r := range t.visible {
		if r == i {
			t.cursor = c
			t.scroll()
			return
		}
	}
}

// SetSize sets the area the table draws into, filter line included.
func (t *Table) SetSize(w, h int) {
	t.width, t.height = w, h
	// leave room for the "(12 of 340)" count after the input
	t.filter.SetWidth(max(w-len(t.filter.Prompt)-24, 8))
	t.scroll()
}

// Filtering reports whether the filter input has the keyboard.
func (t *Table) Filtering() bool { return t.filtering }

// FilterValue is the current filter text.
func (t *Table) FilterValue() string { return t.filter.Value() }

// StartFilter focuses the filter input.
func (t *Table) StartFilter() tea.Cmd {
	t.filtering = true
	t.filter.SetStyles(t.ctx.Styles.Input) // the theme may have changed since
	return t.filter.Focus()
}

// ClearFilter empties and closes the filter.
func (t *Table) ClearFilter() {
	t.filtering = false
	t.filter.Blur()
	t.filter.SetValue("")
	t.query, t.matcher, t.filterErr = "", nil, ""
	t.applyFilter()
}

// Update moves the cursor, or edits the filter while it has the keyboard:
// enter keeps the filter, esc clears it, everything else is typed text.
func (t *Table) Update(msg tea.Msg) tea.Cmd {
	if t.filtering {
		if k, ok := msg.(tea.KeyPressMsg); ok {
			switch k.String() {
			case "enter":
				t.filtering = false
				t.filter.Blur()
				return nil
			case "esc":
				t.ClearFilter()
				return nil
			}
		}
		var cmd tea.Cmd
		t.filter, cmd = t.filter.Update(msg)
		if !t.managed {
			t.query = t.filter.Value()
			t.applyFilter()
		}
		return cmd
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	keys := t.ctx.Keys
	switch {
	case key.Matches(k, keys.Up):
		t.move(-1)
	case key.Matches(k, keys.Down):
		t.move(1)
	case key.Matches(k, keys.PageUp):
		t.move(-t.bodyHeight())
	case key.Matches(k, keys.PageDown):
		t.move(t.bodyHeight())
	case key.Matches(k, keys.Top):
		t.move(-len(t.visible))
	case key.Matches(k, keys.Bottom):
		t.move(len(t.visible))
	}
	return nil
}

func (t *Table) move(n int) {
	t.cursor = min(max(t.cursor+n, 0), max(len(t.visible)-1, 0))
	t.scroll()
}

// scroll keeps the cursor inside the drawn window.
func (t *Table) scroll() {
	h := t.bodyHeight()
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	if h > 0 && t.cursor >= t.offset+h {
		t.offset = t.cursor - h + 1
	}
	t.offset = min(t.offset, max(len(t.visible)-h, 0))
	t.offset = max(t.offset, 0)
}

func (t *Table) applyFilter() {
	q := strings.ToLower(t.query)
	t.visible = t.visible[:0]
	for i, r := range t.rows {
		if t.matcher != nil && !t.matcher(i) {
			continue
		}
		if q == "" || strings.Contains(strings.ToLower(strings.Join(r, " ")), q) {
			t.visible = append(t.visible, i)
		}
	}
	t.cursor = min(t.cursor, max(len(t.visible)-1, 0))
	t.scroll()
}

func (t *Table) showFilterLine() bool { return t.filtering || t.filter.Value() != "" }

// bodyHeight is the number of data rows that fit.
func (t *Table) bodyHeight() int {
	h := t.height - 1 // header
	if t.showFilterLine() {
		h--
		if t.filterErr != "" {
			h--
		}
	}
	return max(h, 0)
}

// widths lays the columns out in the table width: two cells for the
// selection marker, one space between columns. When the minimum widths do
// not fit, columns give way by Shed (width 0: not drawn), so what matters
// most keeps its width rather than every column being cut.
func (t *Table) widths() []int {
	ws := make([]int, len(t.cols))
	shown := len(t.cols)
	free := t.width - 2 - (shown - 1)
	for i, c := range t.cols {
		ws[i] = c.Width
		free -= c.Width
	}
	for free < 0 {
		drop := -1
		for i, c := range t.cols {
			if ws[i] > 0 && c.Shed > 0 && (drop < 0 || c.Shed > t.cols[drop].Shed) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		free += ws[drop] + 1
		ws[drop] = 0
	}
	flex := 0
	for i, c := range t.cols {
		if ws[i] > 0 {
			flex += c.Flex
		}
	}
	if free > 0 && flex > 0 {
		left := free
		last := -1
		for i, c := range t.cols {
			if c.Flex == 0 || ws[i] == 0 {
				continue
			}
			add := free * c.Flex / flex
			ws[i] += add
			left -= add
			last = i
		}
		ws[last] += left
	}
	return ws
}

// View draws exactly height lines of at most width cells.
func (t *Table) View() string {
	st := t.ctx.Styles
	ws := t.widths()
	var b strings.Builder
	cells := make([]string, len(t.cols))
	for i, c := range t.cols {
		if c.Right {
			cells[i] = fitRight(c.Title, ws[i])
		} else {
			cells[i] = Fit(c.Title, ws[i])
		}
	}
	b.WriteString(st.Header.Render(Fit("  "+joinShown(cells, ws), t.width)))
	h := t.bodyHeight()
	for n := 0; n < h; n++ {
		b.WriteByte('\n')
		vi := t.offset + n
		if vi >= len(t.visible) {
			continue
		}
		row := t.rows[t.visible[vi]]
		for i, c := range t.cols {
			v := ""
			if i < len(row) {
				v = row[i]
			}
			switch {
			case c.Right:
				cells[i] = fitRight(v, ws[i])
			case c.Middle:
				cells[i] = Fit(ElideMiddle(v, ws[i]), ws[i])
			default:
				cells[i] = Fit(v, ws[i])
			}
		}
		line := joinShown(cells, ws)
		switch own, ok := t.rowStyle(t.visible[vi]); {
		case vi == t.cursor:
			b.WriteString(st.Selected.Render(Fit("› "+line, t.width)))
		case ok:
			b.WriteString(own.Render(Fit("  "+line, t.width)))
		default:
			b.WriteString(Fit("  "+line, t.width))
		}
	}
	if t.showFilterLine() {
		b.WriteByte('\n')
		line := t.filter.View()
		if !t.filtering {
			line = "/ " + t.filter.Value()
		}
		line += st.Dim.Render("  (" + Count(len(t.visible)) + " of " + Count(len(t.rows)) + ")")
		b.WriteString(fitLines(line, t.width, 1))
		if t.filterErr != "" {
			b.WriteByte('\n')
			b.WriteString(st.Error.Render(fitLines("  bad filter, the last good one stays: "+t.filterErr, t.width, 1)))
		}
	}
	return b.String()
}

// joinShown joins the cells of the columns that have a width.
func joinShown(cells []string, ws []int) string {
	var shown []string
	for i, c := range cells {
		if ws[i] > 0 {
			shown = append(shown, c)
		}
	}
	return strings.Join(shown, " ")
}

func (t *Table) rowStyle(row int) (lipgloss.Style, bool) {
	if t.styleOf == nil {
		return lipgloss.Style{}, false
	}
	return t.styleOf(row)
}
