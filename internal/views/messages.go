package views

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Messages is the third screen: the messages of one group.
type Messages struct {
	listScreen
	insp   *triage.Inspection
	group  triage.Group
	tags   map[string][]string
	marks  map[string]int      // message ids the next action applies to, with their row
	filter filter.Filter       // field filter in force; empty: none
	cost   triage.DeliveryCost // what a read costs the queue's messages
	readAt func() time.Time    // when the inspection shown was read; nil: unknown
}

// SetReadAt tells the screen when the inspection it shows was read (the
// groups screen's read), so its counts say their age like the groups'.
func (m *Messages) SetReadAt(at func() time.Time) { m.readAt = at }

// NewMessages returns an empty messages screen.
func NewMessages(ctx *Context) Messages {
	return Messages{listScreen: newListScreen(ctx, newManagedTable(ctx, nil))}
}

func (m *Messages) columns() []Column {
	cols := []Column{
		{Title: "*", Width: 1}, // "*" marks a message for the next action
		{Title: "id", Width: 10, Max: 32, Flex: 3, Middle: true},   // ids told apart, yet the rest still fits
		{Title: "event type", Width: 8, Max: 24, Flex: 2, Shed: 1}, // what a responder reads a row by: as wide as drawn, up to 24
		{Title: "att", Width: 3, Right: true},
		{Title: "age", Width: 6, Right: true},
		{Title: "died (UTC)", Width: 16, Shed: 3},
		{Title: "reason_code", Width: 8, Flex: 2, Shed: 4}, // the group's own: the header says it
		{Title: "tags", Width: 6, Flex: 2, Shed: 2},
	}
	switch {
	case m.cost.Limited && m.cost.RequeueCounts:
		cols = append(cols, Column{Title: "deliv", Width: 7, Right: true})
	case m.cost.Limited:
		cols = append(cols, Column{Title: "peeks", Width: 5, Right: true})
	}
	return cols
}

// Open shows group g of insp from the top, unfiltered; tags are by message
// id and may be nil.
func (m *Messages) Open(insp *triage.Inspection, g triage.Group, tags map[string][]string) {
	m.table.ClearFilter()
	m.table.SetRows(nil)
	m.table.cursor, m.table.offset = 0, 0
	m.marks = nil // marks belong to the group they were made in
	m.filter = filter.Filter{}
	m.SetGroup(insp, g, tags)
}

// SetGroup shows group g of a fresh inspection, keeping the filter and,
// when still there, the selected message.
func (m *Messages) SetGroup(insp *triage.Inspection, g triage.Group, tags map[string][]string) {
	sel, hadSel := m.Selected()
	m.insp, m.group, m.tags = insp, g, tags
	q, _ := insp.Topology.Queue(insp.Batch.Queue)
	m.cost = triage.DeliveryCostOf(q, insp.Topology.Broker)
	m.table.SetColumns(m.columns())
	m.dropGoneMarks()
	m.render()
	if hadSel {
		m.SelectID(sel.ID)
	}
}

// SetFilter keeps the messages f matches; an empty f lets the caller's
// substring filter (SetSubstring) decide.
func (m *Messages) SetFilter(f filter.Filter) {
	m.filter = f
	if f.Empty() {
		return
	}
	m.table.filterBy(func(row int) bool {
		if m.insp == nil || row >= len(m.group.Members) {
			return false
		}
		return m.filter.Match(m.insp.At(m.group.Members[row]))
	})
}

// SetTags refreshes the tags column.
func (m *Messages) SetTags(tags map[string][]string) {
	m.tags = tags
	m.render()
}

// render hands the table the group's rows, formatted only when drawn
// (or when a substring filter reads them): a group of a million messages
// costs a frame what a group of twenty does.
func (m *Messages) render() {
	if m.insp == nil {
		return
	}
	now := m.ctx.now()
	m.table.SetSource(len(m.group.Members), func(i int) []string { return m.row(i, now) })
}

// row is the cells of the group's i-th message.
func (m *Messages) row(i int, now time.Time) []string {
	t := m.insp.At(m.group.Members[i])
	mark := ""
	if _, ok := m.marks[t.ID]; ok {
		mark = "*"
	}
	row := []string{
		mark,
		sanitize.Line(t.ID),
		m.ctx.shown(t.Envelope.EventType),
		AttemptsText(t),
		ageSince(now, t.DiedAt),
		minute(t.DiedAt),
		m.ctx.shown(t.ReasonCode),
		orDash(tagList(m.tags[t.ID])),
	}
	switch {
	case m.cost.Limited && m.cost.RequeueCounts:
		row = append(row, fmt.Sprintf("%d/%d", t.DeliveryCount, m.cost.Limit))
	case m.cost.Limited:
		row = append(row, strconv.FormatInt(m.cost.PeeksLeft(t.DeliveryCount), 10))
	}
	return row
}

// minute is an absolute time to the minute, in UTC: enough to line a list
// up with an incident timeline; the message screen has the seconds.
func minute(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

func tagList(tags []string) string { return strings.Join(sanitize.Lines(tags), ",") }

// ToggleMark marks or unmarks the message under the cursor and moves down,
// so a run of messages is marked by pressing the key repeatedly.
func (m *Messages) ToggleMark() {
	row, ok := m.table.Selected()
	if !ok || m.insp == nil {
		return
	}
	id := m.insp.At(m.group.Members[row]).ID
	if m.marks == nil {
		m.marks = map[string]int{}
	}
	if _, ok := m.marks[id]; ok {
		delete(m.marks, id)
	} else {
		m.marks[id] = row
	}
	m.table.move(1)
}

// Marked are the marked message ids the filter shows, in queue order: an
// action applies only to what the user sees. It reads the marks, not the
// group, so a large group costs nothing here.
func (m *Messages) Marked() []string {
	if m.insp == nil || len(m.marks) == 0 {
		return nil
	}
	rows := make([]int, 0, len(m.marks))
	for _, row := range m.marks {
		if m.table.Shown(row) {
			rows = append(rows, row)
		}
	}
	slices.Sort(rows)
	ids := make([]string, len(rows))
	for i, row := range rows {
		ids[i] = m.insp.At(m.group.Members[row]).ID
	}
	return ids
}

// ClearMarks unmarks everything (after an action on the marked set).
func (m *Messages) ClearMarks() { m.marks = nil }

// dropGoneMarks forgets marks of messages a refresh no longer shows (an
// action only ever applies to messages the user can see), and finds the
// row of those still there.
func (m *Messages) dropGoneMarks() {
	if len(m.marks) == 0 {
		return
	}
	kept := map[string]int{}
	for row, idx := range m.group.Members {
		if id := m.insp.At(idx).ID; hasKey(m.marks, id) {
			kept[id] = row
		}
	}
	m.marks = kept
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

// Group is the group shown.
func (m *Messages) Group() triage.Group { return m.group }

// Selected is the message under the cursor.
func (m *Messages) Selected() (triage.Triaged, bool) {
	i, ok := m.table.Selected()
	if !ok || m.insp == nil {
		return triage.Triaged{}, false
	}
	return m.insp.At(m.group.Members[i]), true
}

// SelectID puts the cursor on the message with this id.
func (m *Messages) SelectID(id string) {
	if m.insp == nil {
		return
	}
	for i, idx := range m.group.Members {
		if m.insp.At(idx).ID == id {
			m.table.Select(i)
			return
		}
	}
}

// View draws the group's title and its messages.
func (m *Messages) View() string {
	st := m.ctx.Styles
	title := ""
	if m.insp != nil {
		code := "/ " + m.ctx.shown(m.group.ReasonCode)
		if m.group.ReasonCode == "" {
			code = "(no reason_code)" // "/ -" read like a path
		}
		title = fmt.Sprintf("%s › %s %s — %s",
			sanitize.Line(m.insp.Batch.Queue), m.ctx.shown(string(m.group.Reason)), code, Plural(m.group.Count, "message"))
		switch {
		case m.cost.Limited && m.cost.RequeueCounts:
			title += fmt.Sprintf(", delivery limit %d (each read adds 1)", m.cost.Limit)
		case m.cost.Limited:
			title += fmt.Sprintf(", delivery limit %d (peeks: deliveries left; dlqt's reads are free here)", m.cost.Limit)
		}
		if n := len(m.Marked()); n > 0 {
			title += fmt.Sprintf(" — %d marked", n)
		}
		if m.readAt != nil {
			title += m.ctx.readAgo(m.readAt())
		}
	}
	second := ""
	if !m.filter.Empty() && m.insp != nil {
		shown := Count(m.table.Len())
		if m.table.Searching() {
			shown += " so far" // the filter is still testing the group
		}
		second = fmt.Sprintf("filtered: %s of %s where %s", shown,
			Plural(len(m.group.Members), "message"), m.filter.String())
	}
	return m.frame(st.Title.Render(title), second, m.table.View())
}

// ShortHelp implements help.KeyMap.
func (m *Messages) ShortHelp() []key.Binding {
	k := m.ctx.Keys
	mark := k.Mark // one key only (the shortest name), so quit still fits at 80 columns
	if ks := k.Mark.Keys(); len(ks) > 0 {
		short := ks[0]
		for _, s := range ks {
			if len(s) < len(short) {
				short = s
			}
		}
		mark.SetHelp(short, k.Mark.Help().Desc)
	}
	return []key.Binding{k.Open, mark, k.Discard, k.Replay, k.Back, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (m *Messages) FullHelp() [][]key.Binding {
	k := m.ctx.Keys
	return [][]key.Binding{k.navigation(), {k.Open, k.Back, k.Filter, k.Tag},
		{k.Mark, k.Discard, k.Replay, k.Journal}, k.general()}
}
