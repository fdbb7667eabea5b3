package views

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// JournalEntry is one journal entry as the journal screen shows it; the
// root converts the journal's own entries, so views needs no journal.
type JournalEntry struct {
	Seq        uint64
	Time       time.Time
	Actor      string
	Host       string
	Action     string
	Vhost      string
	Queue      string
	MessageIDs []string
	Reason     string
	Details    map[string]any
	PrevHash   string
	Hash       string
	// Writer and Offset, on the team's trail (SetTeam): whose journal the
	// entry is of, and where the audit stream holds it.
	Writer string
	Offset int64
	Void   string // why it counts for nothing ("" when it counts)
}

// Journal is the journal screen: the newest entries, newest first, older
// ones read as the selection nears the end of what was read, with how the
// chain check stands at the top; enter shows one entry whole.
type Journal struct {
	listScreen
	path    string
	read    []JournalEntry       // the entries read so far, journal order: the newest ones
	entries []JournalEntry       // newest first, as the rows; an outcome is folded into its decision
	outcome map[int]JournalEntry // by row: the outcome entry of a decision
	total   int                  // entries in the journal (its newest seq), folded ones included
	verify  string               // "chain verified…", how far the check got, or why it failed
	broken  bool
	loading bool
	detail  bool      // one entry is open
	readAt  time.Time // when the entries shown were read
	scroll  int       // first line of the open entry shown
	team    bool      // the audit stream's entries of every writer (SetTeam)
}

// NewJournal returns an empty journal screen.
func NewJournal(ctx *Context) Journal {
	return Journal{listScreen: newListScreen(ctx, newTable(ctx, []Column{
		{Title: "seq", Width: 5, Right: true},
		{Title: "time (UTC)", Width: 14},
		{Title: "actor", Width: 8, Flex: 1},
		{Title: "action", Width: 14},
		{Title: "queue", Width: 8, Flex: 2},
		{Title: "count", Width: 5, Right: true},
		{Title: "outcome", Width: 12, Shed: 1},
		{Title: "reason", Width: 6, Flex: 4},
	}))}
}

// SetLoading shows that the journal is being read.
func (j *Journal) SetLoading(path string) {
	j.path, j.loading, j.detail, j.team = path, true, false, false
}

// SetTeam shows the team's trail: the entries of every writer on the
// audit stream (stream order), and summary, how their chains stand.
func (j *Journal) SetTeam(stream string, entries []JournalEntry, summary string, broken bool) {
	j.path, j.detail = stream, false
	j.SetPage(entries, len(entries))
	j.team = true
	j.SetVerify(summary, broken)
}

// Team says whether the screen shows the team's trail.
func (j *Journal) Team() bool { return j.team }

// SetEntries shows every entry of the journal (in journal order) newest
// first; verifyErr is the chain check's answer.
func (j *Journal) SetEntries(entries []JournalEntry, verifyErr error) {
	j.SetPage(entries, len(entries))
	j.SetVerify(verifyText(verifyErr), verifyErr != nil)
}

// SetPage shows the newest entries read (journal order) of a journal of
// total entries, newest first.
func (j *Journal) SetPage(entries []JournalEntry, total int) {
	j.loading, j.total, j.readAt = false, total, j.ctx.now()
	j.read = entries
	j.fold()
}

// AddOlder adds entries read before the oldest shown (journal order); the
// selection stays on the entry it was on.
func (j *Journal) AddOlder(entries []JournalEntry) {
	var seq uint64
	if i, ok := j.table.Selected(); ok {
		seq = j.entries[i].Seq
	}
	j.read = append(slices.Clip(entries), j.read...)
	j.fold()
	for i, e := range j.entries {
		if e.Seq == seq {
			j.table.Select(i)
			break
		}
	}
}

// fold makes the rows of what was read: newest first, outcomes folded
// into their decisions.
func (j *Journal) fold() {
	folded, outcomes := foldOutcomes(j.read)
	j.entries = make([]JournalEntry, len(folded))
	j.outcome = map[int]JournalEntry{}
	for i, e := range folded {
		r := len(folded) - 1 - i
		j.entries[r] = e
		if o, ok := outcomes[i]; ok {
			j.outcome[r] = o
		}
	}
	j.table.SetSource(len(j.entries), j.row)
}

// Oldest is the seq of the oldest entry read, 0 when none is.
func (j *Journal) Oldest() uint64 {
	if len(j.read) == 0 {
		return 0
	}
	return j.read[0].Seq
}

// WantsOlder reports that the selection is within a screen of the oldest
// row read while the journal holds older entries: time to read them.
func (j *Journal) WantsOlder() bool {
	i, ok := j.table.Selected()
	return !j.loading && !j.team && ok && j.Oldest() > 1 && i >= len(j.entries)-max(j.height, 1)
}

// SetVerify shows how the chain check stands: the line at the top, and
// whether it says the chain is broken.
func (j *Journal) SetVerify(text string, broken bool) {
	j.verify, j.broken = text, broken
}

// verifyText is the line a check's answer shows.
func verifyText(err error) string {
	if err != nil {
		return "CHAIN BROKEN: " + sanitize.Line(err.Error())
	}
	return "chain verified: every entry's hash holds"
}

// row is the cells of the i-th entry shown, newest first.
func (j *Journal) row(i int) []string {
	e := j.entries[i]
	actor := e.Actor
	if j.team { // several hosts' entries: whose
		actor += "@" + e.Host
	}
	return []string{
		strconv.FormatUint(e.Seq, 10),
		e.Time.UTC().Format("01-02 15:04:05"),
		orDash(sanitize.Line(actor)),
		sanitize.Line(e.Action),
		orDash(sanitize.Line(e.Queue)),
		strconv.Itoa(entryCount(e)),
		j.outcomeText(i),
		orDash(sanitize.Line(e.Reason)),
	}
}

// foldOutcomes pairs each outcome entry (details step "outcome") with the
// decision before it of the same action, queue, actor and reason, so the
// screen shows one row per action with how it ended. It returns the
// entries left as rows (journal order) and the outcome of each, by row.
func foldOutcomes(entries []JournalEntry) ([]JournalEntry, map[int]JournalEntry) {
	var rows []JournalEntry
	outcomes := map[int]JournalEntry{}
	pending := map[string]int{} // decision key -> row
	for _, e := range entries {
		k := strings.Join([]string{e.Writer, e.Action, e.Vhost, e.Queue, e.Actor, e.Reason}, "\x00")
		switch e.Details["step"] {
		case "decision":
			pending[k] = len(rows)
		case "outcome":
			if r, ok := pending[k]; ok && e.Void == "" {
				outcomes[r] = e
				delete(pending, k)
				continue
			}
		}
		rows = append(rows, e)
	}
	return rows, outcomes
}

// outcomeText is how the action of row i ended: "discarded 2", "failed",
// "no outcome" for a decision never followed by one, "—" for entries
// without steps.
func (j *Journal) outcomeText(i int) string {
	e := j.entries[i]
	if e.Void != "" {
		return "NOT COUNTED"
	}
	if e.Details["step"] != "decision" {
		return "—"
	}
	o, ok := j.outcome[i]
	switch {
	case !ok:
		return "no outcome"
	case o.Details["error"] != nil:
		return "failed"
	}
	if n, ok := o.Details["discarded"].(float64); ok {
		return "discarded " + strconv.Itoa(int(n))
	}
	return "done"
}

// entryCount is how many messages an entry names: its ids, or the count a
// group decision recorded.
func entryCount(e JournalEntry) int {
	if len(e.MessageIDs) > 0 {
		return len(e.MessageIDs)
	}
	if n, ok := e.Details["count"].(float64); ok {
		return int(n)
	}
	return 0
}

// Open shows the selected entry whole; false when there is none.
func (j *Journal) Open() bool {
	if _, ok := j.table.Selected(); !ok {
		return false
	}
	j.detail, j.scroll = true, 0
	return true
}

// Detail reports whether one entry is open.
func (j *Journal) Detail() bool { return j.detail }

// Close goes back from an entry to the list.
func (j *Journal) Close() { j.detail = false }

// Table exposes the list for filtering.
func (j *Journal) Table() *Table {
	if j.detail {
		return nil
	}
	return &j.table
}

// Update moves in the list, or scrolls the open entry.
func (j *Journal) Update(msg tea.Msg) tea.Cmd {
	if !j.detail {
		return j.table.Update(msg)
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	keys := j.ctx.Keys
	switch {
	case key.Matches(k, keys.Up):
		j.scroll = max(j.scroll-1, 0)
	case key.Matches(k, keys.Down):
		j.scroll++
	case key.Matches(k, keys.PageUp):
		j.scroll = max(j.scroll-j.height+2, 0)
	case key.Matches(k, keys.PageDown):
		j.scroll += j.height - 2
	case key.Matches(k, keys.Top):
		j.scroll = 0
	}
	return nil
}

// View draws the chain status and the list, or one entry.
func (j *Journal) View() string {
	st := j.ctx.Styles
	title := "journal " + sanitize.Line(j.path)
	if j.team {
		title = "team trail: audit stream " + sanitize.Line(j.path)
	}
	status := "reading the journal…"
	if !j.loading {
		// another dlqt (a headless command, a second TUI) may append meanwhile
		entries := Count(j.total) + " entries"
		if j.total == 1 {
			entries = "1 entry"
		}
		if len(j.read) < j.total {
			entries += " (newest " + Count(len(j.read)) + " read)"
		}
		title += " — " + entries + j.ctx.readAgo(j.readAt)
		status = j.verify
		if j.broken {
			status = st.Warn.Render(status)
		}
	}
	if j.detail {
		return j.frame(st.Title.Render(title), status, j.entryView())
	}
	return j.frame(st.Title.Render(title), status, j.table.View())
}

func (j *Journal) entryView() string {
	i, ok := j.table.Selected()
	if !ok {
		return ""
	}
	p := &page{st: j.ctx.Styles, width: j.width}
	if o, ok := j.outcome[i]; ok { // newest first, as the list: how it ended, then the decision
		entryPage(p, o)
		p.lines = append(p.lines, "")
	}
	entryPage(p, j.entries[i])
	lines := p.lines
	j.scroll = min(j.scroll, max(len(lines)-(j.height-2), 0))
	return strings.Join(lines[j.scroll:], "\n")
}

// entryPage adds one entry, whole, to p.
func entryPage(p *page, e JournalEntry) {
	p.section(fmt.Sprintf("entry %d", e.Seq))
	if e.Void != "" { // first: the one thing that matters about it
		p.field("counts", "NO: "+sanitize.Line(e.Void))
	}
	p.field("time", stamp(e.Time))
	p.field("actor", sanitize.Line(e.Actor))
	p.field("host", sanitize.Line(e.Host))
	p.field("action", sanitize.Line(e.Action))
	p.field("vhost", sanitize.Line(e.Vhost))
	p.field("queue", orDash(sanitize.Line(e.Queue)))
	p.field("reason", orDash(sanitize.Line(e.Reason)))
	p.field("messages", strconv.Itoa(entryCount(e)))
	for _, id := range e.MessageIDs {
		p.hanging("  "+sanitize.Line(id), 2)
	}
	if len(e.Details) > 0 {
		p.section("details")
		keys := make([]string, 0, len(e.Details))
		for k := range e.Details {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v, err := json.Marshal(e.Details[k])
			if err != nil {
				v = []byte("?")
			}
			p.field(sanitize.Line(k), sanitize.Line(string(v)))
		}
	}
	p.section("chain")
	if e.Writer != "" {
		p.field("writer", sanitize.Line(e.Writer))
		p.field("stream offset", strconv.FormatInt(e.Offset, 10))
	}
	p.field("prev hash", e.PrevHash)
	p.field("hash", e.Hash)
}

// ShortHelp implements help.KeyMap.
func (j *Journal) ShortHelp() []key.Binding {
	k := j.ctx.Keys
	if j.detail {
		return []key.Binding{k.Down, k.Back, k.Help, k.Quit}
	}
	return []key.Binding{k.Open, k.Back, k.Filter, k.ExportJournal, k.TeamTrail, k.Refresh, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (j *Journal) FullHelp() [][]key.Binding {
	k := j.ctx.Keys
	return [][]key.Binding{k.navigation(), {k.Open, k.Back, k.Filter, k.ExportJournal, k.TeamTrail}, k.general()}
}
