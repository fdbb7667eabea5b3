package views

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// appMarker marks an application frame without relying on colour.
const appMarker = "›"

// traceOf is the message's stack trace as it may be shown: redacted,
// sanitised with its newlines kept; header names where it came from. The
// redacted headers hold it on one line; it is taken whole only when it
// redacts to the same text (a rule on the header's name that masks all of
// it leaves only the masked line). "" when the message carries none, or a
// single line.
func traceOf(raw, redacted triage.Headers, red *redact.Redactor) (text, header string) {
	trace, want := triage.FaultTrace(raw)
	if want == "" {
		return "", ""
	}
	for k, v := range redacted {
		if !strings.EqualFold(k, want) {
			continue
		}
		line, _ := v.(string)
		if line == "" {
			continue
		}
		shown, _ := red.Text(strings.ReplaceAll(trace, "\r\n", "\n"))
		if sanitize.Line(shown) == line {
			line = sanitize.Text(shown)
		}
		if line = strings.TrimRight(line, "\n "); !strings.Contains(line, "\n") {
			return "", "" // one line ("Max retry attempts exceeded") is no trace: the header shows it
		}
		return line, sanitize.Line(k)
	}
	return "", ""
}

// stackTrace writes the trace line by line: exception lines at the margin,
// frames indented, the application's marked with appMarker (and the warn
// style), each wrapped at a frame's boundaries with a deeper continuation.
func (m *Message) stackTrace(p *page) {
	if m.trace == "" {
		return
	}
	lines := triage.TraceLines(m.trace, m.rules)
	app := 0
	for _, l := range lines {
		if l.App {
			app++
		}
	}
	head := fmt.Sprintf("stack trace (%s, %s", m.traceFrom, Plural(len(lines), "line"))
	if app > 0 {
		head += fmt.Sprintf(", %s %s", Plural(app, "app frame"), appMarker)
	}
	if k := m.ctx.Keys.CopyTrace.Help().Key; k != "" {
		head += "; " + k + " copies it"
	}
	p.section(head + ")")
	w := max(p.width-2, 20)
	for _, l := range lines {
		lead, cont := "", "    "
		if l.Frame {
			lead, cont = "  ", "      "
			if l.App {
				lead = appMarker + " "
			}
		}
		for i, part := range wrapTrace(l.Text, w-len(lead), w-len(cont)) {
			prefix := cont
			if i == 0 {
				prefix = lead
			}
			line := prefix + part
			if l.App {
				line = p.st.Warn.Render(line)
			}
			p.lines = append(p.lines, "  "+line)
		}
	}
}

// wrapTrace cuts a trace line to first cells, then rest cells a line, at
// the boundaries a frame has (traceBreak), so that a class or method name
// is never split; a word longer than a whole line is cut where it must be.
func wrapTrace(s string, first, rest int) []string {
	first, rest = max(first, 10), max(rest, 10)
	var out []string
	w := first
	for ansi.StringWidth(s) > w {
		cut := traceBreak(s, w)
		out = append(out, strings.TrimRight(s[:cut], " "))
		s = strings.TrimLeft(s[cut:], " ")
		w = rest
	}
	return append(out, s)
}

// traceBreak is where to cut s to fit w cells: just after the last space
// or "(" (between a frame's function and its file), else "," or "/", else
// "." or ":" (between names), taking the first kind that keeps at least a
// third of the line; else at w cells.
func traceBreak(s string, w int) int {
	cells, hard := 0, 0
	var last [3]int // the last boundary of each kind, best kind first
	for i, r := range s {
		rw := max(ansi.StringWidth(string(r)), 0)
		if cells+rw > w {
			break
		}
		cells += rw
		end := i + utf8.RuneLen(r)
		hard = end
		switch r {
		case ' ', '(':
			last[0] = end
		case ',', '/':
			last[1] = end
		case '.', ':':
			last[2] = end
		}
	}
	for _, at := range last {
		if at > 0 && at >= hard/3 {
			return at
		}
	}
	for _, at := range last {
		if at > 0 {
			return at
		}
	}
	if hard > 0 {
		return hard
	}
	_, size := utf8.DecodeRuneInString(s) // a rune wider than w: one a line
	return size
}
