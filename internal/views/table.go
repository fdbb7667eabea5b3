package views

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Column describes one table column. Width is the fixed width, or the
// minimum when Flex > 0: flexible columns share what the fixed ones leave,
// in proportion to Flex.
type Column struct {
	Title string
	Width int
	Flex  int
	// Right marks numbers: right-aligned, widened to the widest number
	// drawn so a count is never cut, and written short ("1.2M") only when
	// the line has no room for it whole.
	Right bool
	// Middle cuts a long cell in its middle, keeping the tail (ids).
	Middle bool
	// Max, when above Width, lets the column widen to its widest cell
	// drawn, up to Max (ids: told apart without starving the others).
	Max int
	// Shed is the order in which columns give way when the minimum widths
	// do not fit: the highest goes first; 0 never goes.
	Shed int
}

// Table is the scrolling, filterable list under every list screen. It is
// ours rather than bubbles/table because the selection must show without
// colour (a "›" marker), cells must truncate with "…", and the filter must
// keep indexes into the caller's rows.
//
// It is virtual: the screen gives a row count and a function that formats
// one row, and a frame formats only the rows it draws, so a million
// messages cost what twenty do. A filter reads every row, but a slice at a
// time (search.go): a key is answered at once, the count follows.
type Table struct {
	ctx   *Context
	cols  []Column
	n     int                  // rows before filtering
	rowAt func(i int) []string // cells of row i, already sanitised by the screen
	// visible are the indexes into the rows that pass the filter, in
	// order, as far as the search got; empty while no filter is in force:
	// every row, without a slice of a million indexes.
	visible []int
	search  search
	// stepRows, when above 0, makes a search step test that many rows
	// instead of running for a time slice (tests).
	stepRows int
	cursor   int // index into the visible rows
	offset   int // first visible row drawn
	width    int
	height   int

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
	// filterHint says under the bar how a line of plain words was read
	// (searched in the payload when no row held it); an error wins.
	filterHint string
	styleOf    func(row int) (lipgloss.Style, bool) // a row's own colour, if any
}

func newTable(ctx *Context, cols []Column) Table {
	in := textinput.New()
	in.Prompt = "/ "
	in.Placeholder = "filter"
	in.SetStyles(ctx.Styles.Input)
	return Table{ctx: ctx, cols: cols, filter: in, search: search{done: true, wantRow: -1, wantPos: -1}}
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
	t.applyFilter(false)
}

// filterBy puts a field filter in force: match says which rows pass.
func (t *Table) filterBy(match func(row int) bool) {
	t.query, t.matcher = "", match
	t.applyFilter(true)
}

// SetFilterError shows the parser's error under the bar ("" clears it).
func (t *Table) SetFilterError(s string) { t.filterErr = s }

// SetFilterHint shows how the line was read, under the bar ("" clears it).
func (t *Table) SetFilterHint(s string) { t.filterHint = s }

// FilterError is the error shown under the bar.
func (t *Table) FilterError() string { return t.filterErr }

// Shown reports whether the underlying row i passes the filter; while the
// search runs, a row it has not reached yet is tested on its own, so the
// answer is exact at once.
func (t *Table) Shown(i int) bool {
	if _, ok := t.position(i); ok {
		return true
	}
	return i >= 0 && i < t.n && t.search.untested(i) && t.test(i)
}

// position is where the underlying row i is among the visible rows found.
func (t *Table) position(i int) (int, bool) {
	if i < 0 || i >= t.n {
		return 0, false
	}
	if !t.filtered() {
		return i, true
	}
	c, ok := slices.BinarySearch(t.visible, i)
	return c, ok
}

// filtered reports whether a filter narrows the rows.
func (t *Table) filtered() bool { return t.matcher != nil || t.query != "" }

// visibleRow is the underlying index of the c-th visible row.
func (t *Table) visibleRow(c int) int {
	if !t.filtered() {
		return c
	}
	return t.visible[c]
}

// SetColumns replaces the columns (a quorum queue adds one).
func (t *Table) SetColumns(cols []Column) { t.cols = cols }

// SetRows replaces the rows, keeping the selection on the same underlying
// row when it is still there.
func (t *Table) SetRows(rows [][]string) {
	t.SetSource(len(rows), func(i int) []string { return rows[i] })
}

// SetSource replaces the rows with n rows that row formats on demand,
// keeping the selection on the same underlying row when it is still there.
func (t *Table) SetSource(n int, row func(i int) []string) {
	sel, ok := t.Selected()
	if !ok && t.search.wantRow >= 0 {
		sel, ok = t.search.wantRow, true // still looked for
	}
	t.n, t.rowAt = n, row
	t.applyFilter(true)
	if ok {
		t.Select(sel)
	}
}

// row is the cells of underlying row i.
func (t *Table) row(i int) []string { return t.rowAt(i) }

// Len is the number of rows shown after filtering, and Total before.
func (t *Table) Len() int {
	if !t.filtered() {
		return t.n
	}
	return len(t.visible)
}
func (t *Table) Total() int { return t.n }

// Selected is the index (into the rows given to SetRows) under the cursor.
func (t *Table) Selected() (int, bool) {
	if t.cursor < 0 || t.cursor >= t.Len() {
		return 0, false
	}
	return t.visibleRow(t.cursor), true
}

// Select moves the cursor to the underlying row i when it is visible; while
// the search runs, as soon as it finds i.
func (t *Table) Select(i int) {
	if c, ok := t.position(i); ok {
		t.cursor = c
		t.search.wantRow, t.search.wantPos = -1, -1
		t.scroll()
		return
	}
	if i >= 0 && i < t.n && t.search.untested(i) {
		t.search.wantRow = i
	}
}

// SetSize sets the area the table draws into, filter line included.
func (t *Table) SetSize(w, h int) {
	t.width, t.height = w, h
	t.sizeInput()
	t.scroll()
}

// sizeInput leaves room after the input for its count, "(12 of 340)", or
// while the search runs "(searching… 12 matched so far of 340)".
func (t *Table) sizeInput() {
	room := 24
	if t.Searching() {
		room = max(room, ansi.StringWidth(t.count(t.n))+1)
	}
	t.filter.SetWidth(max(t.width-len(t.filter.Prompt)-room, 8))
}

// count is what the filter line says of the rows shown. While the search
// runs it says so, shorter where the line has no room for it whole: a
// number is never cut.
func (t *Table) count(shown int) string {
	if !t.Searching() {
		return "  (" + Count(shown) + " of " + Count(t.n) + ")"
	}
	room := t.width - len(t.filter.Prompt) - 8 // the input keeps 8 cells
	for _, form := range []func(n int) string{
		func(n int) string { return "  (searching… " + Count(n) + " matched so far of " + Count(t.n) + ")" },
		func(n int) string { return "  (searching… " + Count(n) + " so far)" },
	} {
		if ansi.StringWidth(form(t.n)) <= room { // the widest it can be
			return form(shown)
		}
	}
	return "  (" + Count(shown) + "…)"
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
	t.query, t.matcher, t.filterErr, t.filterHint = "", nil, "", ""
	t.applyFilter(true)
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
			t.applyFilter(false)
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
		t.move(-t.Len())
	case key.Matches(k, keys.Bottom):
		t.move(t.Len())
	}
	return nil
}

func (t *Table) move(n int) {
	t.search.wantRow, t.search.wantPos = -1, -1 // the user's cursor now
	t.cursor = min(max(t.cursor+n, 0), max(t.Len()-1, 0))
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
	t.offset = min(t.offset, max(t.Len()-h, 0))
	t.offset = max(t.offset, 0)
}

func (t *Table) showFilterLine() bool { return t.filtering || t.filter.Value() != "" }

// bodyHeight is the number of data rows that fit.
func (t *Table) bodyHeight() int {
	h := t.height - 1 // header
	if t.showFilterLine() {
		h--
		if t.filterErr != "" || t.filterHint != "" {
			h--
		}
	}
	return max(h, 0)
}

// drawn is the cells of the rows this frame draws, each formatted once.
func (t *Table) drawn() [][]string {
	end := min(t.offset+t.bodyHeight(), t.Len())
	out := make([][]string, 0, max(end-t.offset, 0))
	for c := t.offset; c < end; c++ {
		out = append(out, t.row(t.visibleRow(c)))
	}
	return out
}

// widths lays the columns out in the table width: two cells for the
// selection marker, one space between columns. Numbers take the width of
// the widest drawn. When the widths do not fit, columns give way by Shed
// (width 0: not drawn), so what matters most keeps its width rather than
// every column being cut; then numbers are written short.
func (t *Table) widths(drawn [][]string) []int {
	ws := t.natural(drawn)
	free := t.width - 2 - (len(t.cols) - 1)
	for _, w := range ws {
		free -= w
	}
	free = t.shed(ws, free)
	if free < 0 {
		free = t.shorten(ws, drawn, free)
	}
	t.spread(ws, free)
	return ws
}

// natural is each column's width before the line's width is considered:
// its minimum, widened for the numbers (and, up to Max, the cells) drawn.
func (t *Table) natural(drawn [][]string) []int {
	ws := make([]int, len(t.cols))
	for i, c := range t.cols {
		ws[i] = c.Width
		if !c.Right && c.Max <= c.Width {
			continue
		}
		widest := 0
		for _, r := range drawn {
			if i < len(r) {
				widest = max(widest, cellWidth(r[i]))
			}
		}
		if c.Right {
			ws[i] = max(ws[i], widest, ansi.StringWidth(c.Title))
		}
		if c.Max > c.Width {
			ws[i] = max(ws[i], min(widest, c.Max))
		}
	}
	return ws
}

// shed drops columns by Shed, highest first, while free is negative, and
// returns what is free after.
func (t *Table) shed(ws []int, free int) int {
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
	return free
}

// shorten narrows number columns to their short form ("1.2M") while free
// is negative, and returns what is free after.
func (t *Table) shorten(ws []int, drawn [][]string, free int) int {
	for i, c := range t.cols {
		if free >= 0 {
			break
		}
		if !c.Right || ws[i] == 0 {
			continue
		}
		short := max(c.Width, ansi.StringWidth(c.Title))
		for _, r := range drawn {
			if i < len(r) {
				short = max(short, cellWidth(ShortNumber(r[i])))
			}
		}
		if short < ws[i] {
			free += ws[i] - short
			ws[i] = short
		}
	}
	return free
}

// spread shares what is free among the flexible columns.
func (t *Table) spread(ws []int, free int) {
	flex := 0
	for i, c := range t.cols {
		if ws[i] > 0 {
			flex += c.Flex
		}
	}
	if free <= 0 || flex == 0 {
		return
	}
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

// View draws exactly height lines of at most width cells; it formats
// only the rows it draws.
func (t *Table) View() string {
	st := t.ctx.Styles
	drawn := t.drawn()
	ws := t.widths(drawn)
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
		if n >= len(drawn) {
			continue
		}
		vi := t.offset + n
		t.cells(cells, drawn[n], ws)
		line := joinShown(cells, ws)
		switch own, ok := t.rowStyle(t.visibleRow(vi)); {
		case vi == t.cursor:
			b.WriteString(st.Selected.Render(Fit("› "+line, t.width)))
		case ok:
			b.WriteString(own.Render(Fit("  "+line, t.width)))
		default:
			b.WriteString(Fit("  "+line, t.width))
		}
	}
	if t.showFilterLine() {
		t.filterLine(&b)
	}
	return b.String()
}

// cells fits one row's values into their columns' widths.
func (t *Table) cells(cells, row []string, ws []int) {
	for i, c := range t.cols {
		v := ""
		if i < len(row) {
			v = row[i]
		}
		switch {
		case c.Right:
			cells[i] = fitNumber(v, ws[i])
		case c.Middle:
			cells[i] = Fit(ElideMiddle(v, ws[i]), ws[i])
		default:
			cells[i] = Fit(v, ws[i])
		}
	}
}

// filterLine writes the filter bar, its count, and the parser's error.
func (t *Table) filterLine(b *strings.Builder) {
	st := t.ctx.Styles
	b.WriteByte('\n')
	line := t.filter.View()
	if !t.filtering {
		line = "/ " + t.filter.Value()
	}
	line += st.Dim.Render(t.count(t.Len()))
	b.WriteString(fitLines(line, t.width, 1))
	switch {
	case t.filterErr != "":
		b.WriteByte('\n')
		b.WriteString(st.Error.Render(fitLines("  bad filter, the last good one stays: "+t.filterErr, t.width, 1)))
	case t.filterHint != "":
		b.WriteByte('\n')
		b.WriteString(st.Dim.Render(fitLines("  "+t.filterHint, t.width, 1)))
	}
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
