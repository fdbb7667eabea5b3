package views

import tea "charm.land/bubbletea/v2"

// listScreen is what every list screen has alike: the shared context, a
// table under two header lines, and the size of the screen body.
type listScreen struct {
	ctx    *Context
	table  Table
	width  int
	height int
}

func newListScreen(ctx *Context, t Table) listScreen { return listScreen{ctx: ctx, table: t} }

// Table exposes the list for filtering.
func (l *listScreen) Table() *Table { return &l.table }

// SetSize sets the area of the screen body; the table takes what the two
// header lines leave.
func (l *listScreen) SetSize(w, h int) {
	l.width, l.height = w, h
	l.table.SetSize(w, h-2)
}

// Update handles movement and filter typing.
func (l *listScreen) Update(msg tea.Msg) tea.Cmd { return l.table.Update(msg) }

// frame draws the two header lines over body, exactly the body's size.
func (l *listScreen) frame(title, second, body string) string {
	return fitLines(title+"\n"+second+"\n"+body, l.width, l.height)
}
