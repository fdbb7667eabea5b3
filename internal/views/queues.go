package views

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/doctor"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Queues is the first screen: every parking queue of the vhost.
type Queues struct {
	listScreen
	queues   []triage.ParkingQueue
	loading  bool
	loaded   bool
	failed   bool // the last read failed (the error line says why)
	patterns []string
	health   HealthThresholds
	trends   map[string]Trend
	status   []Health             // per row of queues
	doctor   string               // the doctor's summary for the header, "" until known
	dropping map[string]bool      // sources whose dead letters the doctor says are lost
	raised   map[string]raise     // states held until the queue is dealt with
	reads    map[string]readNote  // what the last browse of a queue found
	changed  map[string]time.Time // when an action last changed a queue
	listedAt time.Time            // when the list shown was read
	broker   triage.Broker        // what the list was read from: a quorum queue's delivery cost
	// wanted is a queue the cursor was put on before the list held it
	// (--queue, then back from its cost dialog before the first list
	// arrived): the list puts the cursor there when it comes.
	wanted string
}

// statsLag is how long the management API's queue depths may trail the
// broker: they are sampled every 5 s, so a list read just after an action
// may not show it yet.
const statsLag = 10 * time.Second

// NoteChange records that an action (discard, replay) changed queue name
// at `at`: until the broker's numbers catch up, its depth says how old it is.
func (q *Queues) NoteChange(name string, at time.Time) {
	if q.changed == nil {
		q.changed = map[string]time.Time{}
	}
	q.changed[name] = at
	q.redraw()
}

// depthCell is p's depth, saying how old it is when it may predate the
// last action on p: a browse's exact count when one is newer, else the
// list's number marked as settling.
func (q *Queues) depthCell(p triage.ParkingQueue, now time.Time) string {
	at, ok := q.changed[p.Name]
	if !ok || now.Sub(at) > statsLag {
		return Count(p.Messages)
	}
	if r, ok := q.reads[p.Name]; ok && !r.truncated && !r.at.Before(at) {
		if r.count == p.Messages {
			return Count(p.Messages)
		}
		return Count(r.count) + " · " + Age(now.Sub(r.at)) + " ago"
	}
	return Count(p.Messages) + " · settling"
}

// raise is a state held up after what raised it (a burst of dead letters)
// has passed: it falls back only when the depth returns to zero or to
// where it was before.
type raise struct {
	level    Health
	baseline int
	holding  bool // the state shown is this one, not what the numbers say now
}

// readNote is what a browse of a queue told about its messages' times,
// better than the broker's head timestamp, which many publishers never set.
type readNote struct {
	oldest, newest time.Time
	from           string // which time the oldest is
	count          int
	truncated      bool      // the read stopped at its bound: count is not the depth
	at             time.Time // when it was read
}

// NewQueues returns the queue list, empty until SetQueues.
func NewQueues(ctx *Context) Queues {
	return Queues{health: DefaultHealth(), listScreen: newListScreen(ctx, newTable(ctx, []Column{
		{Title: "state", Width: 5},
		{Title: "queue", Width: 12, Flex: 3},
		{Title: "depth", Width: 6, Right: true},
		// in/s and trend say a queue is still filling: they give way last
		// (sources first, then consumers, then the oldest's age, which the
		// line above the table and the state word still say)
		{Title: "in/s", Width: 5, Right: true, Shed: 1},
		{Title: "trend", Width: trendWidth, Shed: 2},
		{Title: "oldest", Width: 6, Right: true, Shed: 3},
		{Title: "cons", Width: 4, Right: true, Shed: 4},
		{Title: "sources", Width: 10, Flex: 2, Shed: 5}, // queues that dead-letter here
	}))}
}

// trendWidth cells of trendCell polls each: 2½ minutes at the 5 s poll.
const trendWidth = 10

// SetHealth sets the thresholds that colour the rows and name their state.
func (q *Queues) SetHealth(h HealthThresholds) { q.health = h.WithDefaults() }

// SetDoctor sets the doctor's findings: their summary goes in the header,
// and a source whose dead letters they say are lost is marked in the
// sources column, so the list never claims a path the doctor denies. Call
// it before SetQueues.
func (q *Queues) SetDoctor(fs []doctor.Finding) {
	q.doctor = "doctor: " + SummaryLine(fs)
	q.dropping = map[string]bool{}
	for _, f := range fs {
		switch f.Kind {
		case doctor.KindMissingExchange, doctor.KindUnroutable, doctor.KindCycleSilentDrop, doctor.KindRetryRouteMismatch:
			q.dropping[f.Queue] = true
		}
	}
}

// sources names the queues that dead-letter into p, marking those whose
// dead letters the doctor says are dropped.
func (q *Queues) sources(p triage.ParkingQueue) string {
	names := sanitize.Lines(p.DeadLetteredFrom)
	for i, n := range p.DeadLetteredFrom {
		if q.dropping[n] {
			names[i] += " (dropped!)"
		}
	}
	source := strings.Join(names, ", ")
	if p.ByName && source == "" {
		// the pattern that found it, so a guess by name reads as one (the
		// doctor and --json say whose habit it is)
		pattern, _, _ := strings.Cut(p.Rule, " (")
		source = "(" + sanitize.Line(pattern) + ")"
	}
	return source
}

// Health is the state of the queue called name, as last shown.
func (q *Queues) Health(name string) Health {
	for i, p := range q.queues {
		if p.Name == name && i < len(q.status) {
			return q.status[i]
		}
	}
	return ""
}

// SetPatterns names the parking name patterns in use, for the empty screen.
func (q *Queues) SetPatterns(p []string) { q.patterns = p }

// SetLoading marks a (re)load in flight; the old list stays on screen.
func (q *Queues) SetLoading(on bool) { q.loading = on }

// SetFailed records that the last read failed; an old list stays on screen.
func (q *Queues) SetFailed() { q.loading, q.failed = false, true }

// SetBroker names the broker the list is read from, for what a read of a
// queue would cost (a quorum queue's delivery limit). Call it before
// SetQueues.
func (q *Queues) SetBroker(b triage.Broker) { q.broker = b }

// SetQueues shows a freshly read list with what the root measured of each
// queue across polls (trends by queue name; a queue without one shows its
// publish rate). Every broker string is sanitised here.
func (q *Queues) SetQueues(qs []triage.ParkingQueue, trends map[string]Trend) {
	q.listedAt = q.ctx.now()
	q.show(qs, trends)
}

// show renders qs: SetQueues for a new read, redraw for what was learnt
// since (a browse, an action), which leaves the list's age as it was.
func (q *Queues) show(qs []triage.ParkingQueue, trends map[string]Trend) {
	prev, had := q.Selected()
	now := q.ctx.now()
	q.trends = trends
	qs = attentionOrder(qs, q.ingress, now)
	q.queues, q.loading, q.loaded, q.failed = qs, false, true, false
	q.table.cols[1].Width = nameWidth(qs)
	rows := make([][]string, len(qs))
	q.status = make([]Health, len(qs))
	for i, p := range qs {
		source := q.sources(p)
		var age time.Duration
		oldest, _ := q.oldest(p)
		if !oldest.IsZero() {
			age = now.Sub(oldest)
		}
		in := q.ingress(p)
		q.status[i] = q.hold(p, q.health.Status(in, age, p.Messages), q.trends[p.Name])
		rows[i] = []string{
			string(q.status[i]),
			sanitize.Line(p.Name),
			q.depthCell(p, now),
			rate(in),
			trendLine(q.trends[p.Name].History, trendWidth),
			q.oldestCell(p, oldest, now),
			strconv.Itoa(p.Consumers),
			orDash(source),
		}
	}
	q.table.styleOf = func(row int) (lipgloss.Style, bool) {
		if row >= len(q.status) {
			return lipgloss.Style{}, false
		}
		switch q.status[row] {
		case HealthCrit:
			return q.ctx.Styles.Error, true
		case HealthWarn:
			return q.ctx.Styles.Warn, true
		}
		return lipgloss.Style{}, false
	}
	q.table.SetRows(rows)
	if q.wanted != "" && q.selectListed(q.wanted) {
		q.wanted = ""
	} else if had { // follow the queue, not the row number, across a refresh
		q.selectListed(prev.Name)
	}
}

// NoteRead records what a browse of queue name found: the oldest and
// newest message, as ages has them (AgesOf, or ReadAges.Note as it read).
// It reads none of insp's messages: at a million, that took half a second
// of a frozen screen when the read ended.
func (q *Queues) NoteRead(name string, insp *triage.Inspection, ages ReadAges) {
	if q.reads == nil {
		q.reads = map[string]readNote{}
	}
	q.reads[name] = readNote{oldest: ages.oldest, newest: ages.newest, from: ages.from,
		count: insp.Len(), truncated: !ReadToTheEnd(insp.Batch), at: q.ctx.now()}
	q.redraw()
}

// ReadAges are the oldest and newest message of a read by the best time
// each carries (death time, else the envelope's occurred_at, else the
// timestamp property), taken where the read runs, not on the screen's loop.
type ReadAges struct {
	oldest, newest time.Time
	from           string // which time the oldest is
}

// Note takes one message of the read into the ages.
func (a *ReadAges) Note(t *triage.Triaged) {
	at, from := bestTime(t)
	if at.IsZero() {
		return
	}
	if a.oldest.IsZero() || at.Before(a.oldest) {
		a.oldest, a.from = at, from
	}
	if at.After(a.newest) {
		a.newest = at
	}
}

// AgesOf is the ages of every message of l.
func AgesOf(l triage.List) ReadAges {
	var a ReadAges
	for i := range l.Len() {
		t := l.At(i)
		a.Note(&t)
	}
	return a
}

// redraw renders the list again from what it holds, for what was learnt
// between two reads of it.
func (q *Queues) redraw() {
	if q.loaded {
		q.show(q.queues, q.trends)
	}
}

// bestTime is when t became a dead letter, as well as it is known.
func bestTime(t *triage.Triaged) (time.Time, string) {
	if !t.DiedAt.IsZero() {
		return t.DiedAt, "death time"
	}
	if at, err := time.Parse(time.RFC3339, t.Envelope.OccurredAt); err == nil {
		return at, "envelope time"
	}
	if ts := t.Message.Properties.Timestamp; !ts.IsZero() {
		return ts, "timestamp property"
	}
	return time.Time{}, ""
}

// oldest is the time of p's oldest message from the best source known: a
// browse's, while the queue still holds what it read, else the broker's
// head timestamp.
func (q *Queues) oldest(p triage.ParkingQueue) (time.Time, string) {
	at, from := p.HeadPublished, "timestamp property"
	if at.IsZero() && p.Messages > 0 && !p.HeldSince.IsZero() {
		// no head timestamp (dead letters rarely have one): the broker's
		// depth history says how long at least the messages have waited
		at, from = p.HeldSince, fromDepthHistory
	}
	if at.IsZero() {
		from = ""
	}
	// a read's times come first: the head timestamp is the lowest in rank
	// (often the original publish, or not set at all)
	r, ok := q.reads[p.Name]
	if ok && p.Messages > 0 && p.Messages >= r.count && !r.oldest.IsZero() {
		at, from = r.oldest, r.from
	}
	return at, from
}

// fromDepthHistory names an oldest age known only as a lower bound, from
// the broker's samples of the queue's depth (triage.Queue.HeldSince).
const fromDepthHistory = "depth history"

// oldestCell is the age of p's oldest message, or why there is none:
// "unread" for a queue not browsed this session whose broker keeps no head
// timestamp (its dead letters' times are only known by reading them, and
// a read is never free), "-" for an empty queue.
func (q *Queues) oldestCell(p triage.ParkingQueue, oldest, now time.Time) string {
	_, read := q.reads[p.Name]
	switch {
	case !oldest.IsZero() && oldest.Equal(p.HeldSince) && p.HeadPublished.IsZero():
		return "≥" + Age(now.Sub(oldest)) // a lower bound
	case !oldest.IsZero():
		return Age(now.Sub(oldest))
	case p.Messages == 0:
		return "-"
	case !read:
		return "unread"
	}
	return "?"
}

// oldestDetail says the age of p's oldest message and where it comes
// from, or what it would take to know it: a queue not read yet says enter
// reads it, and whether that read counts as a delivery, rather than the
// bound its depth history gives (the oldest column shows that, "≥13m";
// the cost of a read is what a responder must not miss, and at 80 columns
// the line holds one of them).
func (q *Queues) oldestDetail(p triage.ParkingQueue, now time.Time) string {
	at, from := q.oldest(p)
	_, read := q.reads[p.Name]
	switch {
	case from == fromDepthHistory && (read || p.Messages == 0):
		return "oldest at least " + Age(now.Sub(at)) + " (" + from + ")"
	case from != fromDepthHistory && !at.IsZero():
		return "oldest " + Age(now.Sub(at)) + " (" + from + ")"
	case p.Messages == 0:
		return ""
	case read:
		return "oldest unknown (no message carries a time)"
	}
	open := q.ctx.Keys.Open.Help().Key
	if triage.DeliveryCostOf(p.Queue, q.broker).AsksFirst() {
		return "unread: each read counts a delivery here; " + open + " asks first"
	}
	return "oldest not read yet (" + open + " to browse)"
}

// hold keeps a raised state until the queue is dealt with: a burst's
// inflow decays within a minute, the dead letters it left do not.
func (q *Queues) hold(p triage.ParkingQueue, st Health, tr Trend) Health {
	if q.raised == nil {
		q.raised = map[string]raise{}
	}
	r, had := q.raised[p.Name]
	base := tr.Baseline
	if had {
		base = r.baseline
	}
	switch {
	case p.Messages == 0 || p.Messages <= base:
		delete(q.raised, p.Name) // dealt with, or nothing arrived to hold it for
	case st != HealthOK && (!had || !worse(r.level, st)):
		q.raised[p.Name] = raise{level: st, baseline: base}
	case had && worse(r.level, st):
		r.holding = true
		q.raised[p.Name] = r
		return r.level
	}
	return st
}

// Detail is the selected queue's health in words: what a responder needs
// before opening it, fitted to the screen's width (fitDetail).
func (q *Queues) Detail() string {
	p, ok := q.Selected()
	if !ok {
		return ""
	}
	now := q.ctx.now()
	tr := q.trends[p.Name]
	last := tr.LastArrival
	if r, ok := q.reads[p.Name]; ok && r.newest.After(last) {
		last = r.newest
	}
	// rank orders what gives way when the line is too wide: the highest
	// first; the oldest message's part carries the delivery-cost warning
	// and goes last.
	parts := []detailPart{{"last dead letter " + ago(now, last), 3}}
	switch in := q.ingress(p); {
	case last.IsZero() && in > 0:
		// the in/s column's figure, before dlqt saw a dead letter arrive
		parts[0].text = "arriving at " + rate(in) + "/s (the broker's rate)"
	case last.IsZero():
		parts[0].text = "no arrival seen yet"
	}
	if o := q.oldestDetail(p, now); o != "" {
		parts = append(parts, detailPart{o, 1})
	}
	if tr.GrowthOver > 0 {
		parts = append(parts, detailPart{fmt.Sprintf("%+d in the last %s", tr.Growth, Age(min(tr.GrowthOver, GrowthSpan))), 2})
	}
	if r, ok := q.raised[p.Name]; ok && r.holding {
		parts = append(parts, detailPart{fmt.Sprintf("%s held until the depth is back to %d", r.level, r.baseline), 2})
	}
	return fitDetail(sanitize.Line(p.Name), parts, q.width)
}

type detailPart struct {
	text string
	rank int // the higher, the sooner it gives way
}

// fitDetail is "name: part · part …" in width cells. Where it does not
// fit, whole parts give way, the highest rank first, then the name is cut
// (the table below shows it whole): a part shown is never cut, so a
// warning is read whole or not at all.
func fitDetail(name string, parts []detailPart, width int) string {
	line := func(name string, parts []detailPart) string {
		texts := make([]string, len(parts))
		for i, p := range parts {
			texts[i] = p.text
		}
		return name + ": " + strings.Join(texts, " · ")
	}
	for len(parts) > 1 && ansi.StringWidth(line(name, parts)) > width {
		drop := 0
		for i, p := range parts {
			if p.rank >= parts[drop].rank {
				drop = i
			}
		}
		parts = slices.Delete(slices.Clone(parts), drop, drop+1)
	}
	if over := ansi.StringWidth(line(name, parts)) - width; over > 0 {
		const minName = 8
		keep := max(ansi.StringWidth(name)-over, minName)
		name = ansi.Truncate(name, keep, "…")
	}
	return line(name, parts)
}

// nameWidth is what the longest queue name needs (within bounds): a name
// keeps its width while less important columns give way.
func nameWidth(qs []triage.ParkingQueue) int {
	w := 12
	for _, p := range qs {
		w = max(w, ansi.StringWidth(sanitize.Line(p.Name)))
	}
	return min(w, 30)
}

// ingress is the queue's inflow: the measured trend when there is one,
// else the broker's publish rate.
func (q *Queues) ingress(p triage.ParkingQueue) float64 {
	if t, ok := q.trends[p.Name]; ok {
		return t.Ingress
	}
	return p.Ingress()
}

// attentionOrder puts what needs a responder first: the queue growing
// fastest (rates compared as shown, so noise does not reorder rows), then
// the oldest message (unknown ages last), then the deepest; ties by name,
// so a refresh never shuffles equal rows. It sorts a copy: the caller's
// slice is the engine's.
func attentionOrder(qs []triage.ParkingQueue, ingress func(triage.ParkingQueue) float64, now time.Time) []triage.ParkingQueue {
	out := slices.Clone(qs)
	shown := func(p triage.ParkingQueue) float64 {
		f, _ := strconv.ParseFloat(strings.TrimSuffix(rate(ingress(p)), "k"), 64)
		if strings.HasSuffix(rate(ingress(p)), "k") {
			f *= 1000
		}
		return f
	}
	age := func(p triage.ParkingQueue) time.Duration {
		// the broker's head timestamp, not a browse's times: a read must
		// not reorder the rows under the cursor
		at := p.HeadPublished
		if at.IsZero() {
			at = p.HeldSince
		}
		if at.IsZero() {
			return -1
		}
		return now.Sub(at)
	}
	slices.SortStableFunc(out, func(a, b triage.ParkingQueue) int {
		if c := cmp.Compare(shown(b), shown(a)); c != 0 {
			return c
		}
		if c := cmp.Compare(age(b), age(a)); c != 0 {
			return c
		}
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

// SelectName puts the cursor on the queue called name, at once if listed,
// else when a list that holds it comes.
func (q *Queues) SelectName(name string) {
	q.wanted = ""
	if !q.selectListed(name) {
		q.wanted = name
	}
}

// selectListed puts the cursor on the queue called name if it is listed.
func (q *Queues) selectListed(name string) bool {
	for i, p := range q.queues {
		if p.Name == name {
			q.table.Select(i)
			return true
		}
	}
	return false
}

// View draws the list, or says how to get some parking queues.
func (q *Queues) View() string {
	st := q.ctx.Styles
	var head string
	// the list's age goes right after the count, where it is not cut
	plural, order := Plural(len(q.queues), "parking queue"), ""
	if len(q.queues) > 1 {
		order = ": fastest-growing, then oldest, then deepest first"
	}
	refresh := q.ctx.Keys.Refresh.Help().Key
	switch {
	case !q.loaded && q.failed:
		head = "could not read the parking queues (the error is below); " + refresh + " tries again"
	case !q.loaded:
		head = "reading the topology…"
	case q.failed:
		head = plural + q.ctx.readAgo(q.listedAt) + " (the last refresh failed; " + refresh + " tries again)"
	case q.loading:
		head = plural + q.ctx.readAgo(q.listedAt) + " (refreshing…)"
	default:
		head = plural + q.ctx.readAgo(q.listedAt) + order
	}

	if q.loaded && len(q.queues) == 0 {
		patterns := q.patterns
		if patterns == nil {
			patterns = triage.DefaultParkingPatterns
		}
		body := strings.Join([]string{
			head,
			"",
			"No parking queues in this vhost: no queue receives dead letters, and no",
			"queue name matches a parking pattern:",
			"  " + strings.Join(sanitize.Lines(patterns), ", "),
			"",
			"To try dlqt:",
			"  make demo     load realistic scenarios into the dlqt-demo vhost and open it",
			"  dlqt --demo   open the bundled snapshot, no broker needed",
		}, "\n")
		return fitLines(body, q.width, q.height)
	}
	doctor := q.doctor
	if doctor != "" {
		doctor += " — " + q.ctx.Keys.Doctor.Help().Key + " shows them"
	}
	return fitLines(st.Dim.Render(head)+"\n"+doctor+"\n"+q.Detail()+"\n"+q.table.View(), q.width, q.height)
}

// SetSize sets the area of the screen body: three header lines (what is
// listed, the doctor, the selected queue's health), then the table.
func (q *Queues) SetSize(w, h int) {
	q.width, q.height = w, h
	q.table.SetSize(w, h-3)
}

// ShortHelp implements help.KeyMap.
func (q *Queues) ShortHelp() []key.Binding {
	k := q.ctx.Keys
	return []key.Binding{k.Open, k.Filter, k.Doctor, k.Journal, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (q *Queues) FullHelp() [][]key.Binding {
	k := q.ctx.Keys
	return [][]key.Binding{k.navigation(), {k.Open, k.Filter, k.Back}, {k.Doctor, k.Journal, k.Proposals, k.ResumeReplay, k.SwitchContext}, k.general()}
}
