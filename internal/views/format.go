package views

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Fit truncates s to w cells with "…" and pads it to exactly w cells, so
// columns line up and never wrap (and a reversed status bar spans the line).
// Cells, not bytes: a wide rune takes two.
func Fit(s string, w int) string { return fitAligned(s, w, false) }

// fitRight is Fit for numbers: right-aligned.
func fitRight(s string, w int) string { return fitAligned(s, w, true) }

func fitAligned(s string, w int, right bool) string {
	if w <= 0 {
		return ""
	}
	if !plain(s) || len(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	n := cellWidth(s)
	if n >= w {
		return s
	}
	if right {
		return strings.Repeat(" ", w-n) + s
	}
	return s + strings.Repeat(" ", w-n)
}

// plain reports text of printable ASCII only, one cell a byte: most cells
// are, and measuring them needs no grapheme walk (a frame measures each
// cell several times).
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// cellWidth is the cells s takes on screen.
func cellWidth(s string) int {
	if plain(s) {
		return len(s)
	}
	return ansi.StringWidth(s)
}

// ElideMiddle fits s in w cells by cutting its middle ("msg_shipment…updated-0042"):
// ids of one kind share their start, and the tail tells them apart.
func ElideMiddle(s string, w int) string {
	n := cellWidth(s)
	if n <= w {
		return s
	}
	if w < 3 {
		return ansi.Truncate(s, w, "")
	}
	tail := (w - 1) / 2
	head := w - 1 - tail
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, n-tail, "")
}

// IDList names the first few ids and how many there are, for a dialog
// that must say what it acts on: "m-1, m-2, m-3 and 4 more (7)".
func IDList(ids []string, w int) string {
	const shown = 3
	var names []string
	for i, id := range ids {
		if i == shown {
			break
		}
		names = append(names, ElideMiddle(sanitize.Line(id), max((w-12)/min(len(ids), shown)-2, 12)))
	}
	line := strings.Join(names, ", ")
	if more := len(ids) - len(names); more > 0 {
		line += fmt.Sprintf(" and %d more", more)
	}
	return fmt.Sprintf("%s (%d)", line, len(ids))
}

// Count formats n with thousands separators: 48210 -> "48,210".
func Count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// ShortNumber writes the count that leads s short, for a column with no
// room for it whole: "1,234,567" -> "1.2M", "100,000 · settling" ->
// "100k · settling". It rounds down, so it never claims more than there
// is; s without a leading count comes back as it was.
func ShortNumber(s string) string {
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == ',' || end == 0 && s[end] == '-') {
		end++
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s[:end], ",", ""), 10, 64)
	if err != nil {
		return s
	}
	return shortCount(n) + s[end:]
}

// shortCount is n in at most three digits and a unit: 999, 1.2k, 12k,
// 123k, 1.2M, 1.2G; rounded down.
func shortCount(n int64) string {
	if n < 0 {
		return "-" + shortCount(-n)
	}
	units := []struct {
		size int64
		name string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}
	for _, u := range units {
		if n < u.size {
			continue
		}
		if n < 10*u.size {
			tenths := n * 10 / u.size
			if tenths%10 == 0 {
				return strconv.FormatInt(tenths/10, 10) + u.name
			}
			return strconv.FormatInt(tenths/10, 10) + "." + strconv.FormatInt(tenths%10, 10) + u.name
		}
		return strconv.FormatInt(n/u.size, 10) + u.name
	}
	return strconv.FormatInt(n, 10)
}

// fitNumber fits a number cell in w cells, right-aligned: whole when it
// fits, else short ("1.2M"), cut with "…" only when even that does not.
func fitNumber(s string, w int) string {
	if cellWidth(s) > w {
		if short := ShortNumber(s); cellWidth(short) <= w {
			s = short
		}
	}
	return fitRight(s, w)
}

// Plural counts a noun: "1 event", "2 events", "1,204 messages".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return Count(n) + " " + noun + "s"
}

// Age is a compact duration: "45s", "12m", "3h12m", "2d4h".
func Age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	default:
		days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
		if h == 0 {
			return fmt.Sprintf("%dd", days)
		}
		return fmt.Sprintf("%dd%dh", days, h)
	}
}

// Legend explains the placeholders every screen uses; the full help shows
// it. "?" is a value nobody recorded, "-" is a value that is empty, "—" a
// value that does not apply (the attempts of a message that expired or
// fell off a max-length queue, the outcome of a journal entry without
// steps).
const Legend = "? = unknown   - = none   — = does not apply   unread = not browsed yet"

// ageSince is how long ago t was, "?" when t is unknown.
func ageSince(now, t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return Age(now.Sub(t))
}

// ago is ageSince with " ago", or "?" when unknown.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return Age(now.Sub(t)) + " ago"
}

// stamp is an absolute time in UTC, the zone incident timelines are kept in.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// rate formats a message rate in msg/s.
func rate(f float64) string {
	switch {
	case f <= 0:
		return "0"
	case f < 10:
		return strconv.FormatFloat(f, 'f', 1, 64)
	case f < 10000:
		return strconv.FormatFloat(f, 'f', 0, 64)
	default:
		return strconv.FormatFloat(f/1000, 'f', 0, 64) + "k"
	}
}

// orDash shows "-" for an empty value, so a blank cell never reads as a bug.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// fitLines truncates every line of s to w cells and returns exactly h lines.
func fitLines(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, w, "…")
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// mask finds the redaction masks triage writes ("[REDACTED:card ...1111]",
// "[REDACTED sha256:1a2b3c4d]"): a wrap must never cut one in two.
var mask = regexp.MustCompile(`\[REDACTED[^\]\n]{0,60}\]`)

// Stand-ins that ansi.Wrap does not break at, swapped in for the spaces and
// hyphens inside a mask while wrapping (Unicode private use: never shown).
const (
	keepSpace  = '\uE000'
	keepHyphen = '\uE001'
)

// wrapWords wraps s at word boundaries to w cells and returns the lines;
// masks stay whole unless one is wider than the line itself.
func wrapWords(s string, w int) []string {
	protect := mask.MatchString(s) && !strings.ContainsAny(s, string([]rune{keepSpace, keepHyphen}))
	if protect {
		s = mask.ReplaceAllStringFunc(s, func(m string) string {
			return strings.NewReplacer(" ", string(keepSpace), "-", string(keepHyphen)).Replace(m)
		})
	}
	lines := strings.Split(ansi.Wrap(s, w, ""), "\n")
	if protect {
		back := strings.NewReplacer(string(keepSpace), " ", string(keepHyphen), "-")
		for i, l := range lines {
			lines[i] = back.Replace(l)
		}
	}
	return lines
}
