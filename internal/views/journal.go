package views

import (
	"encoding/json"
	"fmt"
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
}

// Journal is the journal screen: every entry, newest first, with whether
// the hash chain verifies at the top; enter shows one entry whole.
type Journal struct {
	listScreen
	path    string
	entries []JournalEntry       // newest first, as the rows; an outcome is folded into its decision
	outcome map[int]JournalEntry // by row: the outcome entry of a decision
	total   int                  // entries in the journal, folded ones included
	verify  string               // "verified" or why not; empty while loading
	broken  bool
	loading bool
	detail  bool      // one entry is open
	readAt  time.Time // when the entries shown were read
	scroll  int       // first line of the open entry shown
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
	j.path, j.loading, j.detail = path, true, false
}

// SetEntries shows entries (in journal order) newest first; verifyErr is
// the chain check's answer.
func (j *Journal) SetEntries(entries []JournalEntry, verifyErr error) {
	j.loading, j.total, j.readAt = false, len(entries), j.ctx.now()
	folded, outcomes := foldOutcomes(entries)
	j.entries = make([]JournalEntry, len(folded))
	j.outcome = map[int]JournalEntry{}
	for i, e := range folded {
		r := len(folded) - 1 - i
		j.entries[r] = e
		if o, ok := outcomes[i]; ok {
			j.outcome[r] = o
		}
	}
	j.broken = verifyErr != nil
	j.verify = "chain verified: every entry's hash holds"
	if verifyErr != nil {
		j.verify = "CHAIN BROKEN: " + sanitize.Line(verifyErr.Error())
	}
	j.table.SetSource(len(j.entries), j.row)
}

// row is the cells of the i-th entry shown, newest first.
func (j *Journal) row(i int) []string {
	e := j.entries[i]
	return []string{
		strconv.FormatUint(e.Seq, 10),
		e.Time.UTC().Format("01-02 15:04:05"),
		orDash(sanitize.Line(e.Actor)),
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
		k := strings.Join([]string{e.Action, e.Vhost, e.Queue, e.Actor, e.Reason}, "\x00")
		switch e.Details["step"] {
		case "decision":
			pending[k] = len(rows)
		case "outcome":
			if r, ok := pending[k]; ok {
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
	status := "reading the journal…"
	if !j.loading {
		// another dlqt (a headless command, a second TUI) may append meanwhile
		entries := Count(j.total) + " entries"
		if j.total == 1 {
			entries = "1 entry"
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
	p.field("prev hash", e.PrevHash)
	p.field("hash", e.Hash)
}

// ShortHelp implements help.KeyMap.
func (j *Journal) ShortHelp() []key.Binding {
	k := j.ctx.Keys
	if j.detail {
		return []key.Binding{k.Down, k.Back, k.Help, k.Quit}
	}
	return []key.Binding{k.Open, k.Back, k.Filter, k.ExportJournal, k.Refresh, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (j *Journal) FullHelp() [][]key.Binding {
	k := j.ctx.Keys
	return [][]key.Binding{k.navigation(), {k.Open, k.Back, k.Filter, k.ExportJournal}, k.general()}
}
