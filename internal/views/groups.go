package views

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Groups is the second screen: the messages of one queue grouped by
// (reason, reason_code), with the browse progress while it is read.
type Groups struct {
	listScreen
	queue   string
	all     *triage.Inspection // as read
	insp    *triage.Inspection // as shown: all, or regrouped by the filter
	filter  filter.Filter      // field filter in force; empty: none
	loading bool
	failed  bool // the last browse failed (the error line says why)
	read    int
	expect  int
	// returning is how many messages of an earlier read the browse waits
	// for the broker to return before it reads (0: it does not wait).
	returning int
	started   time.Time // when the browse in flight started, for its rate
	live      bool      // all is the groups of a first browse still reading
	spin      spinner.Model
	readAt    time.Time // when the inspection shown was read
	changed   time.Time // when an action last changed the queue
	narrow    *narrowing
	// reread says a read narrowed in steps has just come on screen, for
	// the screens that show part of it (NewRead).
	reread bool
	// stepRows, when above 0, makes a narrowing step test that many
	// messages instead of running for a time slice (tests).
	stepRows int
}

// narrowing is a field filter being put in force over the messages read,
// a slice per Update, as the table's search (search.go): typing one over a
// million messages matched and regrouped them all in each key's Update,
// and so did a read arriving under a filter. Until it ends, the filter in
// force, the read before and its groups stay on screen and are what an
// action takes.
type narrowing struct {
	f         filter.Filter
	all       *triage.Inspection // the read it narrows
	readAt    time.Time          // a new read's time; zero: the read shown
	next      int                // the next message of all to test
	matched   []int              // the indexes in all of the matches so far
	groups    *triage.Grouper    // of the matches, by their rank in matched
	scheduled bool               // a SearchStep is on its way
}

// NoteChange records that an action changed queue name at `at`: until it
// is read again, the header says how old its numbers are.
func (g *Groups) NoteChange(name string, at time.Time) {
	if name == g.queue {
		g.changed = at
	}
}

// NewGroups returns an empty groups screen.
func NewGroups(ctx *Context) Groups {
	cols := []Column{
		{Title: "reason", Width: 14},
		{Title: "reason_code", Width: 12, Flex: 2, Max: 50}, // a fingerprint is read whole before the event types
		{Title: "count", Width: 5, Right: true},             // widens to the numbers drawn
		{Title: "oldest", Width: 6, Right: true},
		{Title: "newest", Width: 6, Right: true, Shed: 1},
		{Title: "event types", Width: 10, Flex: 2, Shed: 2},
	}
	if ctx.Owner != nil {
		cols = append(cols, Column{Title: "owner", Width: 9, Flex: 1})
	}
	return Groups{spin: spinner.New(spinner.WithSpinner(spinner.Line)), listScreen: newListScreen(ctx, newManagedTable(ctx, cols))}
}

// Bound says how much of the queue a snapshot holds, for headers and the
// status line: "first 10,000 of 48,210 messages" or "all 37 messages".
func Bound(b triage.Batch) string {
	s := bound(b)
	if b.HeldElsewhere > 0 {
		s += "; " + HeldElsewhere(b)
	}
	return s
}

// HeldElsewhere says how much of the queue another reader held, so a
// half-empty read is never taken for the whole queue.
func HeldElsewhere(b triage.Batch) string {
	total := b.Depth + b.HeldElsewhere
	s := fmt.Sprintf("%s of %s are held by another reader", Count(b.HeldElsewhere), Plural(total, "message"))
	if len(b.HeldBy) > 0 {
		names := make([]string, len(b.HeldBy))
		for i, n := range b.HeldBy {
			names[i] = sanitize.Line(n)
		}
		what := "connection "
		if len(names) > 1 {
			what = "connections "
		}
		s += " (" + what + strings.Join(names, ", ") + ")"
	}
	return s
}

// Returning says that a read waits, before it begins, for the broker to
// return n messages of an earlier read.
func Returning(n int) string {
	return fmt.Sprintf("waiting for the broker to return %s of an earlier read", Plural(n, "message"))
}

func bound(b triage.Batch) string {
	if u := b.Unreadable; u != nil {
		// The browse stopped at a message the AMQP client cannot decode:
		// say where, and the command that sets it aside.
		return fmt.Sprintf("first %s of %s; message at position %d unreadable (headers the AMQP client cannot decode: dlqt quarantine)",
			Count(b.Count()), Plural(b.Depth, "message"), u.Position)
	}
	if b.Bound != "" && b.Truncated() {
		// Something other than the limit stopped the hold: say what.
		return fmt.Sprintf("held %s of %s: %s", Count(b.Count()), Plural(b.Depth, "message"), b.Bound)
	}
	if b.Truncated() && !ReadToTheEnd(b) {
		return fmt.Sprintf("first %s of %s", Count(b.Count()), Plural(b.Depth, "message"))
	}
	if b.Count() == 1 {
		return "the only message"
	}
	return "all " + Plural(b.Count(), "message")
}

// ReadToTheEnd reports a browse that stopped because the queue had no
// more, not at its bound or on an error: its count is the depth, whatever
// the broker's sampled depth (which trails an action by seconds) says.
func ReadToTheEnd(b triage.Batch) bool {
	limit := b.Limit
	if limit <= 0 {
		limit = triage.DefaultBrowseLimit
	}
	return b.Err == nil && b.Count() < limit
}

// Open starts showing queue name, dropping the old inspection; the caller
// starts the browse (and StartLoading).
func (g *Groups) Open(name string) {
	g.queue, g.insp, g.all, g.failed = name, nil, nil, false
	g.filter, g.narrow, g.reread = filter.Filter{}, nil, false
	g.table.ClearFilter()
	g.table.SetRows(nil)
}

// ReadAt is when the inspection shown was read.
func (g *Groups) ReadAt() time.Time { return g.readAt }

// Queue is the queue shown.
func (g *Groups) Queue() string { return g.queue }

// StartLoading shows the progress line until SetInspection or StopLoading.
func (g *Groups) StartLoading() tea.Cmd {
	g.loading, g.failed, g.read, g.expect, g.returning = true, false, 0, 0, 0
	g.started = g.ctx.now()
	return g.spin.Tick
}

// StopLoading hides the progress line (the browse was refused).
func (g *Groups) StopLoading() {
	g.loading = false
	g.dropLive()
}

// SetFailed hides the progress line and says the read failed; an older
// inspection stays on screen.
func (g *Groups) SetFailed() {
	g.loading, g.failed = false, true
	g.dropLive()
}

// SetLive shows the groups of what the first browse of the queue has read
// so far, counts growing while it reads. Nothing can be opened or acted on
// until the browse ends (Inspection is nil meanwhile); a refresh keeps the
// last complete read on screen instead, and so does a filter.
func (g *Groups) SetLive(partial *triage.Inspection) {
	g.read = max(g.read, partial.Batch.Read)
	if !g.loading || (g.all != nil && !g.live) || !g.filter.Empty() || g.narrow != nil {
		return
	}
	partial.Batch.Depth = max(g.expect, partial.Batch.Read)
	g.all, g.live = partial, true
	g.regroup()
}

func (g *Groups) dropLive() {
	if g.live {
		g.all, g.insp, g.live, g.narrow = nil, nil, false, nil
		g.table.SetRows(nil)
	}
}

// Loading reports whether a browse is in flight.
func (g *Groups) Loading() bool { return g.loading }

// SetProgress records how far the browse got.
func (g *Groups) SetProgress(read, expected int) {
	g.read, g.expect, g.returning = read, expected, 0
}

// SetReturning records that the browse waits for the broker to return n
// messages of an earlier read before it reads.
func (g *Groups) SetReturning(n int) { g.returning = n }

// UpdateSpinner advances the spinner while loading; the tick chain ends
// when loading does.
func (g *Groups) UpdateSpinner(msg spinner.TickMsg) tea.Cmd {
	if !g.loading {
		return nil
	}
	var cmd tea.Cmd
	g.spin, cmd = g.spin.Update(msg)
	return cmd
}

// SetInspection shows what the browse found, narrowed by the filter in
// force (or the one being put in force). Narrowed in steps, the read shows
// once they end (NewRead says so); the read before stays until then.
func (g *Groups) SetInspection(insp *triage.Inspection) {
	g.loading, g.failed, g.reread = false, false, false
	f := g.filter
	if g.narrow != nil {
		f = g.narrow.f // the filter typed last
	}
	if f.Empty() {
		g.all, g.live, g.narrow = insp, false, nil
		g.readAt = g.ctx.now()
		g.regroup()
		return
	}
	if g.live {
		g.all, g.insp, g.live = nil, nil, false // never groups of a half read
	}
	g.narrow = &narrowing{f: f, all: insp, readAt: g.ctx.now(), groups: triage.NewGrouper(true)}
	g.stepNarrow(searchSlice)
	g.reread = false // ended at once: the caller sees it
}

// NewRead reports, once, that a read narrowed in steps has just come on
// screen: the screens showing part of the read before take it up.
func (g *Groups) NewRead() bool {
	r := g.reread
	g.reread = false
	return r
}

// SetFilter narrows the groups to the messages f matches, regrouped, so
// counts and ages are the filtered ones; an empty f shows everything. Over
// many messages the narrowing ends in later steps (SearchCmd); the filter
// in force stays until then.
func (g *Groups) SetFilter(f filter.Filter) {
	g.narrow = nil
	if f.Empty() || g.all == nil {
		g.filter = f
		if !f.Empty() {
			g.table.filterBy(nil) // the rows are narrowed already
		}
		if g.all != nil {
			g.regroup()
		}
		return
	}
	g.narrow = &narrowing{f: f, all: g.all, groups: triage.NewGrouper(true)}
	g.stepNarrow(searchSlice)
}

// SearchCmd is the command for the next step of the field filter being put
// in force; nil when there is none or its step is on its way.
func (g *Groups) SearchCmd() tea.Cmd {
	n := g.narrow
	if n == nil || n.scheduled {
		return nil
	}
	n.scheduled = true
	return stepCmd(func() {
		if g.narrow == n { // not replaced by a later key or read
			n.scheduled = false
			g.stepNarrow(searchSlice)
		}
	})
}

// Narrowing reports a field filter still being put in force.
func (g *Groups) Narrowing() bool { return g.narrow != nil }

// stepNarrow matches messages for at most budget (all of them up to
// wholeRows) and puts the filter in force once every message is tested:
// the same messages and groups as filter.Narrow (Apply, then the grouping
// of the matches in order). The matches are not copied: the narrowed read
// is the read's list at the matched positions (triage.Subset).
func (g *Groups) stepNarrow(budget time.Duration) {
	n := g.narrow
	start := time.Now()
	all := n.all.List()
	spent := func(done int) bool {
		if g.stepRows > 0 {
			return done >= g.stepRows
		}
		return done >= wholeRows && done%256 == 0 && time.Since(start) >= budget
	}
	for done := 1; n.next < all.Len(); done++ {
		if t := all.At(n.next); n.f.Match(t) {
			n.matched = append(n.matched, n.next)
			n.groups.Add(&t, len(n.matched)-1)
		}
		n.next++
		if n.next < all.Len() && spent(done) {
			return
		}
	}
	g.all, g.filter, g.narrow = n.all, n.f, nil
	if !n.readAt.IsZero() {
		g.readAt, g.reread = n.readAt, true
	}
	g.table.filterBy(nil) // the rows are narrowed already
	narrowed := *n.all
	narrowed.Messages, narrowed.Entries = nil, &triage.Subset{Of: all, Idx: slices.Clip(n.matched)}
	narrowed.Groups = n.groups.Groups()
	g.show(&narrowed)
}

// Filter is the field filter in force.
func (g *Groups) Filter() filter.Filter { return g.filter }

// regroup shows every message read: with a field filter, the groups come
// from a narrowing (stepNarrow) instead.
func (g *Groups) regroup() { g.show(g.all) }

// show puts insp's groups in the table.
func (g *Groups) show(insp *triage.Inspection) {
	g.insp = insp
	now := g.ctx.now()
	g.table.SetSource(len(insp.Groups), func(i int) []string {
		gr := insp.Groups[i]
		row := []string{
			g.ctx.shown(string(gr.Reason)),                             // x-death's text: a client may have written it
			g.ctx.shown(triage.FaultLabel(gr.ReasonCode, gr.ThrownAt)), // a fingerprint with its first line
			Count(gr.Count),
			ageSince(now, gr.Oldest),
			ageSince(now, gr.Newest),
			g.ctx.shown(strings.Join(gr.EventTypes, ", ")),
		}
		if g.ctx.Owner != nil {
			row = append(row, orDash(sanitize.Line(g.ctx.Owner(g.queue, gr))))
		}
		return row
	})
}

// Inspection is what is shown (narrowed by the filter), nil while the
// first browse runs; the messages screen and every action work on it.
func (g *Groups) Inspection() *triage.Inspection {
	if g.live {
		return nil
	}
	return g.insp
}

// Selected is the group under the cursor.
func (g *Groups) Selected() (triage.Group, bool) {
	i, ok := g.table.Selected()
	if !ok || g.insp == nil {
		return triage.Group{}, false
	}
	return g.insp.Groups[i], true
}

// SelectGroup puts the cursor on the group with this reason and code.
func (g *Groups) SelectGroup(reason triage.Reason, code string) {
	if g.insp == nil {
		return
	}
	for i, gr := range g.insp.Groups {
		if gr.Reason == reason && gr.ReasonCode == code {
			g.table.Select(i)
		}
	}
}

func (g *Groups) header() string {
	name := sanitize.Line(g.queue)
	if g.insp == nil {
		return name
	}
	q, _ := g.insp.Topology.Queue(g.queue)
	kind := sanitize.Line(q.Type)
	if c := triage.DeliveryCostOf(q, g.insp.Topology.Broker); c.Limited {
		kind += fmt.Sprintf(", delivery limit %d", c.Limit)
		if c.Default {
			kind += " (broker default)"
		}
	}
	if kind != "" {
		name += " (" + kind + ")"
	}
	head := name + " — " + g.counts()
	// the groups are never re-read behind the user's back (a browse is
	// never free): past a refresh interval they say how old they are
	if g.readAt.Before(g.changed) {
		head += " · read " + Age(g.ctx.now().Sub(g.readAt)) + " ago, before the last action"
	} else {
		head += g.ctx.readAgo(g.readAt)
	}
	return head
}

// counts says how much is shown: "all 20 messages, 7 groups", or with a
// filter (fields or words) "3 of 20 messages, 2 groups", 0 when nothing
// matches, so the header never claims more than the list holds.
func (g *Groups) counts() string {
	if g.live {
		return fmt.Sprintf("%s of %s read so far, %s", Count(g.read), Plural(g.all.Batch.Depth, "message"), Plural(len(g.insp.Groups), "group"))
	}
	if g.filter.Empty() && g.table.Len() == g.table.Total() {
		return Bound(g.all.Batch) + ", " + Plural(len(g.insp.Groups), "group")
	}
	msgs := 0
	for i, gr := range g.insp.Groups {
		if g.table.Shown(i) {
			msgs += gr.Count
		}
	}
	return fmt.Sprintf("%s of %s, %s", Count(msgs), Plural(g.all.Len(), "message"), Plural(g.table.Len(), "group"))
}

// filterLine says which filter narrows the groups, under the title.
func (g *Groups) filterLine() string {
	if g.filter.Empty() || g.insp == nil {
		return ""
	}
	return fmt.Sprintf("filtered: %s of %s where %s", Count(g.insp.Len()),
		Plural(g.all.Len(), "message"), g.filter.String())
}

// progress says what the browse is doing, with numbers that move, so a slow
// read never looks stuck: "reading orders.dlq: 3,200 / 10,000 messages…".
func (g *Groups) progress() string {
	line := g.spin.View() + " reading " + sanitize.Line(g.queue) + ": "
	switch {
	case g.expect > 0:
		line += Count(g.read) + " / " + Plural(g.expect, "message") + "…"
	case g.read > 0:
		line += Plural(g.read, "message") + " so far…"
	case g.returning > 0:
		line += Returning(g.returning) + "…"
	default:
		line += "asking the broker…"
	}
	line += g.rate()
	if g.expect > 0 {
		barW := min(g.width-ansi.StringWidth(line)-3, 40)
		if barW >= 5 {
			done := min(barW*g.read/g.expect, barW)
			line += "  " + strings.Repeat("█", done) + strings.Repeat("░", barW-done)
		}
	}
	return line
}

// rate is the read's speed and, with a total, the time it still needs:
// " 41,200/s, 2s left".
func (g *Groups) rate() string {
	elapsed := g.ctx.now().Sub(g.started)
	if g.read == 0 || elapsed < 500*time.Millisecond {
		return ""
	}
	perSec := float64(g.read) / elapsed.Seconds()
	out := " " + Count(int(perSec)) + "/s"
	if g.expect > g.read {
		out += ", " + Age(time.Duration(float64(g.expect-g.read)/perSec*float64(time.Second))) + " left"
	}
	return out
}

// View draws the header, the progress while browsing, and the groups.
func (g *Groups) View() string {
	st := g.ctx.Styles
	second := g.filterLine()
	if n := g.narrow; n != nil {
		what := "filtering by "
		if !n.readAt.IsZero() {
			what = "filtering the new read by "
		}
		second = fmt.Sprintf("%s%s: %s of %s tested, %s matched…", what, n.f.String(),
			Count(n.next), Plural(n.all.Len(), "message"), Count(len(n.matched)))
	}
	if g.loading {
		second = g.progress()
	}
	if g.insp != nil && len(g.insp.Groups) == 0 && !g.loading && g.narrow == nil {
		second = "The queue is empty: nothing to triage."
		if !g.filter.Empty() {
			second = "No message matches " + g.filter.String() + " (" + Plural(g.all.Len(), "message") + " read)."
		}
	}
	if g.failed {
		refresh := g.ctx.Keys.Refresh.Help().Key
		second = "could not read this queue (the error is below); " + refresh + " tries again"
		if g.insp != nil {
			second = "the last read failed (the error is below), showing the one before; " + refresh + " tries again"
		}
	}
	list := ""
	if g.insp != nil {
		list = g.table.View()
	}
	return g.frame(st.Title.Render(g.header()), second, list)
}

// ShortHelp implements help.KeyMap.
func (g *Groups) ShortHelp() []key.Binding {
	k := g.ctx.Keys
	return []key.Binding{k.Open, k.Back, k.Discard, k.Replay, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (g *Groups) FullHelp() [][]key.Binding {
	k := g.ctx.Keys
	return [][]key.Binding{k.navigation(), {k.Open, k.Back, k.Filter},
		{k.Discard, k.Replay, k.Journal, k.Refresh}, k.general()}
}
