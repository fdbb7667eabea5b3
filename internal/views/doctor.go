package views

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage/doctor"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Doctor is the topology doctor's screen: the findings of the vhost, most
// urgent first, the selected one's detail and fix under the list; open
// shows one finding whole.
type Doctor struct {
	listScreen
	vhost    string
	findings []doctor.Finding
	loading  bool
	loaded   bool
	failed   bool
	whole    bool      // one finding on the whole screen
	unfolded bool      // the advisories are listed one by one
	rowOf    []int     // finding index of each row; foldRow for the folded advisories
	hscroll  int       // cells the fix commands are scrolled left: they never wrap
	readAt   time.Time // when the topology diagnosed was read
}

// foldRow is the row that stands for the folded advisories.
const foldRow = -1

// NewDoctor returns an empty doctor screen.
func NewDoctor(ctx *Context) Doctor {
	return Doctor{listScreen: newListScreen(ctx, newTable(ctx, []Column{
		{Title: "severity", Width: 8},
		{Title: "kind", Width: 22},
		{Title: "queue", Width: 10, Flex: 3},
		{Title: "exchange", Width: 8, Flex: 2},
	}))}
}

// SeverityWord is how a severity reads on screen: a word, never only a hue.
func SeverityWord(s string) string { return strings.ToUpper(sanitize.Line(s)) }

// SetLoading marks a diagnosis in flight; old findings stay on screen.
func (d *Doctor) SetLoading() { d.loading, d.failed = true, false }

// SetFailed records that the topology could not be read.
func (d *Doctor) SetFailed() { d.loading, d.failed = false, true }

// SetFindings shows a diagnosis of vhost: errors first, then warnings;
// more than one advisory folds into one row until it is opened.
func (d *Doctor) SetFindings(vhost string, fs []doctor.Finding) {
	fs = doctor.Shown(fs, d.ctx.Redactor) // a copy: the caller's findings stay as they are
	slices.SortStableFunc(fs, func(a, b doctor.Finding) int {
		return cmp.Compare(severityRank(a.Severity), severityRank(b.Severity))
	})
	d.vhost, d.findings, d.readAt = vhost, fs, d.ctx.now()
	d.loading, d.loaded, d.failed = false, true, false
	d.layoutRows()
	if len(fs) == 0 {
		d.whole = false
	}
}

func severityRank(s string) int {
	switch s {
	case doctor.SeverityError:
		return 0
	case doctor.SeverityWarning:
		return 1
	}
	return 2
}

// advisories counts the advisories found.
func (d *Doctor) advisories() int {
	n := 0
	for _, f := range d.findings {
		if f.Severity == doctor.SeverityAdvisory {
			n++
		}
	}
	return n
}

// layoutRows makes the list's rows: every error and warning, then the
// advisories, folded into one row when there are several.
func (d *Doctor) layoutRows() {
	fold := !d.unfolded && d.advisories() > 1
	var rows [][]string
	d.rowOf = d.rowOf[:0]
	for i, f := range d.findings {
		if fold && f.Severity == doctor.SeverityAdvisory {
			continue
		}
		d.rowOf = append(d.rowOf, i)
		rows = append(rows, []string{SeverityWord(f.Severity), sanitize.Line(f.Kind),
			orDash(sanitize.Line(f.Queue)), orDash(sanitize.Line(f.Exchange))})
	}
	if fold {
		d.rowOf = append(d.rowOf, foldRow)
		rows = append(rows, []string{SeverityWord(doctor.SeverityAdvisory),
			fmt.Sprintf("%d advisories,", d.advisories()), d.ctx.Keys.Open.Help().Key + " to show", ""})
	}
	d.table.styleOf = func(row int) (lipgloss.Style, bool) {
		if row >= len(d.rowOf) || d.rowOf[row] == foldRow {
			return lipgloss.Style{}, false
		}
		return d.severityStyle(d.findings[d.rowOf[row]].Severity)
	}
	d.table.SetRows(rows)
	d.SetSize(d.width, d.height) // the list's height follows its rows
}

func (d *Doctor) severityStyle(s string) (lipgloss.Style, bool) {
	switch s {
	case doctor.SeverityError:
		return d.ctx.Styles.Error, true
	case doctor.SeverityWarning:
		return d.ctx.Styles.Warn, true
	}
	return lipgloss.Style{}, false
}

// Findings are the findings shown.
func (d *Doctor) Findings() []doctor.Finding { return d.findings }

// Selected is the finding under the cursor.
func (d *Doctor) Selected() (doctor.Finding, bool) {
	i, ok := d.table.Selected()
	if !ok || i >= len(d.rowOf) || d.rowOf[i] == foldRow {
		return doctor.Finding{}, false
	}
	return d.findings[d.rowOf[i]], true
}

// Open shows the selected finding whole, or the folded advisories one by
// one; Close goes back to the list.
func (d *Doctor) Open() {
	if i, ok := d.table.Selected(); ok && i < len(d.rowOf) && d.rowOf[i] == foldRow {
		d.unfolded = true
		d.layoutRows()
		return
	}
	if _, ok := d.Selected(); ok {
		d.whole = true
	}
}

// Scroll moves the fix commands by n cells (left when negative): they are
// never wrapped, so a long one is read by scrolling.
func (d *Doctor) Scroll(n int) { d.hscroll = max(d.hscroll+n, 0) }

// Close returns to the list; it reports whether a finding was open.
func (d *Doctor) Close() bool {
	was := d.whole
	d.whole = false
	return was
}

// Whole reports whether one finding fills the screen.
func (d *Doctor) Whole() bool { return d.whole }

// SetSize sets the area of the screen body: the list takes what its rows
// need up to half, the selected finding the rest.
func (d *Doctor) SetSize(w, h int) {
	d.width, d.height = w, h
	rows := d.table.Total() + 1 // header
	if d.table.showFilterLine() {
		rows++
	}
	d.table.SetSize(w, min(max(rows, 2), max((h-1)/2, 2)))
}

// Update moves the cursor while the list shows.
func (d *Doctor) Update(msg tea.Msg) tea.Cmd {
	if d.whole {
		return nil
	}
	return d.table.Update(msg)
}

// SummaryLine counts findings by severity: "1 error, 2 warnings, 1 advisory".
func SummaryLine(fs []doctor.Finding) string {
	n := map[string]int{}
	for _, f := range fs {
		n[f.Severity]++
	}
	var parts []string
	for _, s := range []struct{ key, noun string }{
		{doctor.SeverityError, "error"}, {doctor.SeverityWarning, "warning"}, {doctor.SeverityAdvisory, "advisory"},
	} {
		if n[s.key] > 0 {
			noun := Plural(n[s.key], s.noun)
			if s.key == doctor.SeverityAdvisory && n[s.key] > 1 {
				noun = Count(n[s.key]) + " advisories"
			}
			parts = append(parts, noun)
		}
	}
	if len(parts) == 0 {
		return "no findings"
	}
	return strings.Join(parts, ", ")
}

// View draws the list and the selected finding, or one finding whole.
func (d *Doctor) View() string {
	st := d.ctx.Styles
	title := "doctor — vhost " + sanitize.Line(d.vhost)
	refresh := d.ctx.Keys.Refresh.Help().Key
	var head string
	switch {
	case d.failed:
		head = "could not read the topology (the error is below); " + refresh + " tries again"
	case !d.loaded:
		head = "reading the topology…"
	case d.loading:
		head = SummaryLine(d.findings) + " (re-running…)"
	default:
		head = SummaryLine(d.findings) + d.ctx.readAgo(d.readAt) + ", most urgent first; " + refresh + " re-runs"
	}
	if !d.loaded {
		return fitLines(st.Title.Render("doctor")+"\n"+head, d.width, d.height)
	}
	if len(d.findings) == 0 {
		body := st.Title.Render(title) + "\n" + head + "\n\n" +
			"No topology problem found: every dead-letter path ends in a queue, no cycle,\n" +
			"no parking queue that loses messages or is consumed automatically."
		return fitLines(body, d.width, d.height)
	}
	f, selected := d.Selected()
	if d.whole {
		lines := []string{st.Title.Render(title + " — one finding"), ""}
		lines = append(lines, d.finding(f, d.height-2)...)
		return fitLines(strings.Join(lines, "\n"), d.width, d.height)
	}
	lines := []string{st.Title.Render(title), head, d.table.View()}
	used := 2 + d.table.height
	if !selected { // the folded advisories' row, or a filter matching none
		return fitLines(strings.Join(lines, "\n"), d.width, d.height)
	}
	lines = append(lines, d.finding(f, d.height-used)...)
	return fitLines(strings.Join(lines, "\n"), d.width, d.height)
}

// finding writes f in at most h lines: severity word and kind, what is
// involved, the detail and the fix, wrapped to the width.
func (d *Doctor) finding(f doctor.Finding, h int) []string {
	if h <= 0 {
		return nil
	}
	st := d.ctx.Styles
	s := sanitize.Line
	w := max(d.width-4, 20) // continuation lines sit 4 cells in
	word := SeverityWord(f.Severity)
	if sty, ok := d.severityStyle(f.Severity); ok {
		word = sty.Render(word)
	}
	lines := []string{"", word + " " + st.Section.Render(s(f.Kind))}
	var where []string
	if f.Queue != "" {
		where = append(where, "queue "+s(f.Queue))
	}
	if f.Exchange != "" {
		where = append(where, "exchange "+s(f.Exchange))
	}
	if len(where) > 0 {
		lines = append(lines, "  "+strings.Join(where, ", "))
	}
	block := func(label, text string) {
		parts := wrapWords(label+s(text), w)
		for i, p := range parts {
			if i == 0 {
				lines = append(lines, "  "+p)
				continue
			}
			lines = append(lines, "    "+p)
		}
	}
	block("what: ", f.Detail)
	prose, commands := SplitCommands(s(f.Fix))
	block("fix:  ", prose)
	for _, c := range commands {
		lines = append(lines, "    $ "+d.scrolled(c, w-2))
	}
	if len(commands) > 0 {
		k := d.ctx.Keys
		lines = append(lines, st.Dim.Render(fmt.Sprintf("    (never wrapped: %s/%s scroll it)", k.Left.Help().Key, k.Right.Help().Key)))
	}
	if len(lines) > h {
		lines = lines[:h]
		lines[h-1] = fmt.Sprintf("  … %s shows it whole", d.ctx.Keys.Open.Help().Key)
		if d.whole {
			lines[h-1] = "  …"
		}
	}
	return lines
}

// commandRe finds a shell command in a fix: from the tool's name to the end
// of its sentence (a dot inside a name is not an end).
var commandRe = regexp.MustCompile(`(?:rabbitmqctl|rabbitmqadmin) [^)]*?(?:\.\s|\.$|\)|$)`)

// SplitCommands takes the commands out of a fix's prose, so they are shown
// whole on lines of their own and can be pasted as they are.
func SplitCommands(fix string) (prose string, commands []string) {
	prose = commandRe.ReplaceAllStringFunc(fix, func(m string) string {
		c := strings.TrimRight(m, ". )")
		commands = append(commands, c)
		if strings.Contains(tail(m), ")") { // already inside parentheses
			return "the command below" + tail(m)
		}
		return "(the command below)" + tail(m)
	})
	return prose, commands
}

// tail is what ends a command's sentence or parenthesis: kept in the prose.
func tail(m string) string { return strings.TrimPrefix(m, strings.TrimRight(m, ". )")) }

// scrolled is the part of a command the horizontal scroll shows, marked
// at either end where it goes on.
func (d *Doctor) scrolled(c string, w int) string {
	n := ansi.StringWidth(c)
	off := min(d.hscroll, max(n-w, 0))
	out := ansi.Cut(c, off, off+w)
	if off > 0 {
		out = "…" + ansi.TruncateLeft(out, 1, "")
	}
	if off+w < n {
		out = ansi.Truncate(out, w-1, "") + "…"
	}
	return out
}

// ShortHelp implements help.KeyMap.
func (d *Doctor) ShortHelp() []key.Binding {
	k := d.ctx.Keys
	if d.whole {
		return []key.Binding{k.Back, k.Refresh, k.Help, k.Quit}
	}
	return []key.Binding{k.Open, k.Back, k.Refresh, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (d *Doctor) FullHelp() [][]key.Binding {
	k := d.ctx.Keys
	return [][]key.Binding{k.navigation(), {k.Open, k.Back, k.Filter, k.Left, k.Right}, k.general()}
}
