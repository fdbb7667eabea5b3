package views

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
)

// Queues is the first screen: every parking queue of the vhost.
type Queues struct {
	ctx      *Context
	table    Table
	queues   []triage.ParkingQueue
	loading  bool
	loaded   bool
	failed   bool // the last read failed (the error line says why)
	patterns []string
	width    int
	height   int
}

// NewQueues returns the queue list, empty until SetQueues.
func NewQueues(ctx *Context) Queues {
	return Queues{ctx: ctx, table: newTable(ctx, []Column{
		{Title: "queue", Width: 12, Flex: 3},
		{Title: "type", Width: 7},
		{Title: "depth", Width: 7, Right: true},
		{Title: "in/s", Width: 5, Right: true},
		{Title: "cons", Width: 4, Right: true},
		{Title: "oldest", Width: 6, Right: true},
		{Title: "dead-lettered from", Width: 10, Flex: 2},
	})}
}

// SetPatterns names the parking name patterns in use, for the empty screen.
func (q *Queues) SetPatterns(p []string) { q.patterns = p }

// SetLoading marks a (re)load in flight; the old list stays on screen.
func (q *Queues) SetLoading(on bool) { q.loading = on }

// SetFailed records that the last read failed; an old list stays on screen.
func (q *Queues) SetFailed() { q.loading, q.failed = false, true }

// SetQueues shows a freshly read list. Every broker string is sanitised here.
func (q *Queues) SetQueues(qs []triage.ParkingQueue) {
	prev, had := q.Selected()
	qs = attentionOrder(qs)
	q.queues, q.loading, q.loaded, q.failed = qs, false, true, false
	now := q.ctx.now()
	rows := make([][]string, len(qs))
	for i, p := range qs {
		from := make([]string, len(p.DeadLetteredFrom))
		for j, f := range p.DeadLetteredFrom {
			from[j] = triage.SanitizeLine(f)
		}
		source := strings.Join(from, ", ")
		if p.ByName && source == "" {
			source = "(matched by name)"
		}
		rows[i] = []string{
			triage.SanitizeLine(p.Name),
			triage.SanitizeLine(p.Type),
			Count(p.Messages),
			rate(p.PublishRate),
			strconv.Itoa(p.Consumers),
			ageSince(now, p.HeadPublished),
			orDash(source),
		}
	}
	q.table.SetRows(rows)
	if had { // follow the queue, not the row number, across a refresh
		q.SelectName(prev.Name)
	}
}

// attentionOrder puts the deepest queue first, where a responder looks, and
// breaks ties by name so a refresh never shuffles equal rows. It sorts a
// copy: the caller's slice is the engine's.
func attentionOrder(qs []triage.ParkingQueue) []triage.ParkingQueue {
	out := slices.Clone(qs)
	slices.SortStableFunc(out, func(a, b triage.ParkingQueue) int {
		if c := cmp.Compare(b.Messages, a.Messages); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}

// Selected is the queue under the cursor.
func (q *Queues) Selected() (triage.ParkingQueue, bool) {
	i, ok := q.table.Selected()
	if !ok {
		return triage.ParkingQueue{}, false
	}
	return q.queues[i], true
}

// SelectName puts the cursor on the queue called name, if listed.
func (q *Queues) SelectName(name string) {
	for i, p := range q.queues {
		if p.Name == name {
			q.table.Select(i)
			return
		}
	}
}

// Table exposes the list for filtering.
func (q *Queues) Table() *Table { return &q.table }

// SetSize sets the area of the screen body.
func (q *Queues) SetSize(w, h int) {
	q.width, q.height = w, h
	q.table.SetSize(w, h-1)
}

// Update handles movement and filter typing.
func (q *Queues) Update(msg tea.Msg) tea.Cmd { return q.table.Update(msg) }

// View draws the list, or says how to get some parking queues.
func (q *Queues) View() string {
	st := q.ctx.Styles
	var head string
	listed := Plural(len(q.queues), "parking queue")
	if len(q.queues) > 1 {
		listed += ", deepest first"
	}
	refresh := q.ctx.Keys.Refresh.Help().Key
	switch {
	case !q.loaded && q.failed:
		head = "could not read the parking queues (the error is below); " + refresh + " tries again"
	case !q.loaded:
		head = "reading the topology…"
	case q.failed:
		head = listed + " (the last refresh failed; " + refresh + " tries again)"
	case q.loading:
		head = listed + " (refreshing…)"
	default:
		head = listed
	}

	if q.loaded && len(q.queues) == 0 {
		patterns := q.patterns
		if patterns == nil {
			patterns = triage.DefaultParkingPatterns
		}
		clean := make([]string, len(patterns))
		for i, p := range patterns {
			clean[i] = triage.SanitizeLine(p)
		}
		body := strings.Join([]string{
			head,
			"",
			"No parking queues in this vhost: no queue receives dead letters, and no",
			"queue name contains a parking pattern:",
			"  " + strings.Join(clean, ", "),
			"",
			"To try dlqt:",
			"  make demo     load realistic scenarios into the dlqt-demo vhost and open it",
			"  dlqt --demo   open the bundled snapshot, no broker needed",
		}, "\n")
		return fitLines(body, q.width, q.height)
	}
	return fitLines(st.Dim.Render(head)+"\n"+q.table.View(), q.width, q.height)
}

// ShortHelp implements help.KeyMap.
func (q *Queues) ShortHelp() []key.Binding {
	k := q.ctx.Keys
	return []key.Binding{k.Open, k.Filter, k.Refresh, k.Journal, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (q *Queues) FullHelp() [][]key.Binding {
	k := q.ctx.Keys
	return [][]key.Binding{k.navigation(), {k.Open, k.Filter, k.Back}, {k.Journal, k.ResumeReplay}, k.general()}
}
