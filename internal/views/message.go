package views

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Message is the fourth screen: one message, read safely, in a scrollable
// viewport: identity, failure, attempt timeline, payload and headers.
type Message struct {
	ctx     *Context
	vp      viewport.Model
	msg     triage.Triaged
	cost    triage.DeliveryCost
	headers triage.Headers
	hidden  int // header values redacted
	red     *redact.Redactor
	// trace is the stack trace of the fault headers, redacted and
	// sanitised with its newlines, from header traceFrom; rules mark its
	// application frames.
	trace     string
	traceFrom string
	rules     triage.FrameRules
	tags      []string
	// revealed is the unredacted payload after a journalled reveal, "" when
	// hidden; revealSeq is the journal entry that allowed it.
	revealed  string
	revealSeq uint64
	payloadAt int              // the payload section's first line, where a reveal scrolls to
	readAt    func() time.Time // when the inspection shown was read; nil: unknown
	width     int
	height    int
}

// NewMessage returns an empty message screen.
func NewMessage(ctx *Context) Message {
	vp := viewport.New()
	vp.FillHeight = true
	return Message{ctx: ctx, vp: vp}
}

// SetMessage shows t. cost is what a read costs its queue; red
// masks secrets in the headers (the payload is already redacted by triage).
func (m *Message) SetMessage(t triage.Triaged, cost triage.DeliveryCost, red *redact.Redactor, tags []string) {
	same := m.msg.ID == t.ID
	m.msg, m.cost, m.tags = t, cost, tags
	m.revealed, m.revealSeq = "", 0 // a reveal is for one look at one message
	m.headers, m.hidden = redact.Headers(t.Message.Headers, red)
	m.trace, m.traceFrom = traceOf(t.Message.Headers, m.headers, red)
	m.red = red
	m.render()
	if !same {
		m.vp.GotoTop()
	}
}

// Top scrolls back to the start: a message opened again is read from its
// identity down, wherever it was left (SetMessage keeps the place for a
// refresh of the one on screen).
func (m *Message) Top() { m.vp.GotoTop() }

// Reveal shows text (the unredacted, sanitised payload) in place of the
// redacted one, naming journal entry seq; Hide or SetMessage hides it.
func (m *Message) Reveal(text string, seq uint64) {
	m.revealed, m.revealSeq = text, seq
	if text == "" {
		m.revealed = "(empty)"
	}
	m.render()
	m.vp.SetYOffset(m.payloadAt) // show what was asked for
}

// Hide puts the redacted payload back.
func (m *Message) Hide() {
	m.revealed, m.revealSeq = "", 0
	m.render()
}

// Revealed reports whether the unredacted payload is on screen.
func (m *Message) Revealed() bool { return m.revealed != "" }

// SetTags refreshes the tags line.
func (m *Message) SetTags(tags []string) {
	m.tags = tags
	m.render()
}

// SetFrameRules says which frames of a stack trace are the application's
// (the config's app_frames), for the trace to mark them.
func (m *Message) SetFrameRules(r triage.FrameRules) {
	m.rules = r
	m.render()
}

// Trace is the whole stack trace shown (redacted and sanitised) and the
// header it is from; "" when the message has none.
func (m *Message) Trace() (text, header string) { return m.trace, m.traceFrom }

// Shown is the message on screen.
func (m *Message) Shown() triage.Triaged { return m.msg }

// SetSize sets the area of the screen body.
func (m *Message) SetSize(w, h int) {
	m.width, m.height = w, h
	m.vp.SetWidth(w)
	m.vp.SetHeight(max(h-1, 1))
	m.render()
}

// Update scrolls with the shared keymap (the viewport's own keys are not
// used, so a user's keymap.yaml applies here too).
func (m *Message) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	scroll(&m.vp, &m.ctx.Keys, k)
	return nil
}

// scroll moves vp by the shared keymap's movement keys (the viewport's
// own keys are not used, so a user's keymap.yaml applies).
func scroll(vp *viewport.Model, keys *KeyMap, k tea.KeyPressMsg) {
	switch {
	case key.Matches(k, keys.Up):
		vp.ScrollUp(1)
	case key.Matches(k, keys.Down):
		vp.ScrollDown(1)
	case key.Matches(k, keys.PageUp):
		vp.PageUp()
	case key.Matches(k, keys.PageDown):
		vp.PageDown()
	case key.Matches(k, keys.Top):
		vp.GotoTop()
	case key.Matches(k, keys.Bottom):
		vp.GotoBottom()
	}
}

// SetReadAt tells the page when the message shown was read (the groups
// screen's read), so its numbers (attempts, deliveries left) say their age.
func (m *Message) SetReadAt(at func() time.Time) { m.readAt = at }

// View draws the title line and the viewport.
func (m *Message) View() string {
	st := m.ctx.Styles
	title := "message " + sanitize.Line(m.msg.ID)
	if m.Revealed() {
		title += fmt.Sprintf(" — REVEALED (journal #%d)", m.revealSeq)
	}
	if m.vp.TotalLineCount() > m.vp.Height() {
		title += fmt.Sprintf(" — %d%%", int(m.vp.ScrollPercent()*100))
	}
	if m.readAt != nil {
		title += m.ctx.readAgo(m.readAt())
	}
	return fitLines(st.Title.Render(title)+"\n"+m.vp.View(), m.width, m.height)
}

// ShortHelp implements help.KeyMap. It says only how to scroll, so back,
// tag and quit still fit at 80 columns; the full help has the page keys.
func (m *Message) ShortHelp() []key.Binding {
	k := m.ctx.Keys
	scroll := k.Down
	scroll.SetHelp(k.Down.Help().Key, "scroll")
	return []key.Binding{scroll, k.Back, k.Reveal, k.Discard, k.Replay, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (m *Message) FullHelp() [][]key.Binding {
	k := m.ctx.Keys
	return [][]key.Binding{k.navigation(), {k.Back, k.Tag, k.Reveal, k.CopyTrace}, {k.Discard, k.Replay, k.Journal, k.Doctor}, k.general()}
}

// labelWidth aligns the values of every section.
const labelWidth = 16

// page builds the viewport's lines, wrapped to the width.
type page struct {
	st    Styles
	width int
	lines []string
}

func (p *page) section(title string) {
	if len(p.lines) > 0 {
		p.lines = append(p.lines, "")
	}
	p.lines = append(p.lines, p.st.Section.Render(ansi.Truncate(title, p.width, "…")))
}

// field writes "label  value", wrapping a long value under itself.
func (p *page) field(label, value string) {
	w := max(p.width-2-labelWidth, 10)
	parts := wrapWords(value, w)
	for i, part := range parts {
		l := ""
		if i == 0 {
			l = label
		}
		p.lines = append(p.lines, "  "+p.st.Label.Render(Fit(l, labelWidth))+part)
	}
}

// hanging writes one logical line wrapped to the width, continuation lines
// indented so they read as part of it.
func (p *page) hanging(line string, indent int) {
	w := max(p.width-2, 20)
	parts := wrapWords(line, w)
	p.lines = append(p.lines, "  "+parts[0])
	if len(parts) == 1 {
		return
	}
	rest := strings.Join(parts[1:], " ")
	pad := strings.Repeat(" ", indent)
	for _, part := range wrapWords(rest, max(w-indent, 10)) {
		p.lines = append(p.lines, "  "+pad+part)
	}
}

// text writes free text (payload) with a small indent, wrapped at word
// boundaries so a masked value or an escaped control reads whole; a word
// longer than the screen is broken. A wrapped line continues two cells
// right of its own indentation, so pretty-printed JSON keeps its shape.
func (p *page) text(s string) {
	w := max(p.width-2, 10)
	for _, line := range strings.Split(s, "\n") {
		body := strings.TrimLeft(line, " ")
		ind := min(len(line)-len(body), w/2)
		pad := strings.Repeat(" ", ind)
		parts := wrapWords(body, max(w-ind, 10)) // a line that fits stays whole
		p.lines = append(p.lines, "  "+pad+parts[0])
		if len(parts) == 1 {
			continue
		}
		// the rest is wrapped afresh at the continuation width: re-wrapping
		// the lines already cut at the first width left a two-cell line
		// after each one of a long word ("xx")
		rest, ok := strings.CutPrefix(body, parts[0])
		if !ok {
			rest = strings.Join(parts[1:], " ")
		}
		for _, part := range wrapWords(strings.TrimLeft(rest, " "), max(w-ind-2, 10)) {
			p.lines = append(p.lines, "  "+pad+"  "+part)
		}
	}
}

// render lays the message out in the viewport, section by section.
func (m *Message) render() {
	if m.width <= 0 {
		return
	}
	p := &page{st: m.ctx.Styles, width: m.width}
	m.identity(p)
	m.failure(p)
	m.stackTrace(p)
	m.timeline(p)
	m.payload(p)
	m.headerSection(p)
	m.vp.SetContentLines(p.lines)
}

// shownFields is a section's values on their way to the screen: each
// passes the redactor and the sanitiser (triage.ShownLine), and the
// section's title says how many were masked.
type shownFields struct {
	red    *redact.Redactor
	masked int
}

func (f *shownFields) line(value string) string {
	shown, n := triage.ShownLine(f.red, value)
	f.masked += n
	return orDash(shown)
}

func (f *shownFields) title(name string) string {
	if f.masked == 0 {
		return name
	}
	return name + " (" + Plural(f.masked, "value") + " redacted)"
}

func (m *Message) identity(p *page) {
	t := m.msg
	f := &shownFields{red: m.red}
	corr := t.Message.Properties.CorrelationID
	if corr == "" {
		corr = t.Envelope.CorrelationID
	}
	fields := [][2]string{
		{"id", f.line(t.ID)},
		{"message_id", f.line(t.Message.Properties.MessageID)},
		{"correlation id", f.line(corr)},
		{"event type", f.line(t.Envelope.EventType)},
		{"schema version", f.line(t.Envelope.SchemaVersion)},
		{"occurred at", f.line(t.Envelope.OccurredAt)},
		{"tags", orDash(tagList(m.tags))},
	}
	p.section(f.title("identity"))
	for _, kv := range fields {
		p.field(kv[0], kv[1])
	}
	m.traceLink(p)
}

// traceLink names the message's trace and links it with the config's
// trace_url. The link is built from the validated hex id and the
// configured template only; it is an OSC 8 hyperlink where the terminal
// takes one, and its text is the URL, or the id when the URL is too wide.
func (m *Message) traceLink(p *page) {
	t := m.msg
	if t.TraceID == "" {
		return
	}
	_, source := triage.TraceIDOf(t.Message.Headers, t.Envelope)
	id, masked := triage.ShownLine(m.red, t.TraceID) // a configured rule may take hex ids for secrets
	p.field("trace id", id+" ("+source+")")
	url, ok := m.ctx.TraceURL.Link(t.TraceID)
	if !ok || masked > 0 {
		return
	}
	text := url
	if ansi.StringWidth(text) > p.width-2-labelWidth {
		text = "open trace " + t.TraceID
	}
	if m.ctx.Hyperlinks {
		text = ansi.SetHyperlink(url) + text + ansi.ResetHyperlink()
	}
	p.lines = append(p.lines, "  "+p.st.Label.Render(Fit("trace link", labelWidth))+text)
}

func (m *Message) failure(p *page) {
	t := m.msg
	f := &shownFields{red: m.red}
	reason, code := f.line(string(t.Reason)), f.line(t.ReasonCode)
	var consumer, first, last string
	if e := t.Envelope.Failure; e != nil {
		consumer = f.line(strings.TrimSpace(e.Consumer + " " + e.ConsumerVersion))
		first, last = f.line(e.FirstFailedAt), f.line(e.LastFailedAt)
	}
	p.section(f.title("failure"))
	p.field("reason", reason)
	p.field("reason_code", code)
	if t.ExceptionType != "" {
		p.field("exception", f.line(t.ExceptionType))
		p.field("thrown at", f.line(t.ThrownAt))
	}
	p.field("attempts", AttemptsText(t))
	died := when(m.ctx.now(), t.DiedAt)
	if t.DiedAt.IsZero() {
		died = "? (no death time recorded on this message)"
	}
	p.field("died at", died)
	switch c := m.cost; {
	case c.Limited && c.RequeueCounts:
		p.field("delivery count", fmt.Sprintf("%d of limit %d before this read (the read itself added 1)", t.DeliveryCount, c.Limit))
	case c.Limited:
		p.field("delivery count", fmt.Sprintf("%d of limit %d: %d peeks left (dlqt's requeue is free on this broker; a reject, a closed channel or a crash counts)",
			t.DeliveryCount, c.Limit, c.PeeksLeft(t.DeliveryCount)))
	}
	if e := t.Envelope.Failure; e != nil {
		p.field("consumer", consumer)
		p.field("app attempt", strconv.Itoa(e.Attempt))
		p.field("first failed", first)
		p.field("last failed", last)
	}
}

func (m *Message) timeline(p *page) {
	t := m.msg
	head := "attempt timeline (" + Plural(len(t.Timeline), "event")
	if t.TimelineRedactions > 0 { // triage redacted it (BuildTimeline)
		head += ", " + Plural(t.TimelineRedactions, "value") + " redacted"
	}
	p.section(head + ")")
	for _, e := range t.Timeline {
		p.hanging(timelineLine(e), 33)
	}
	if len(t.Timeline) == 0 {
		p.lines = append(p.lines, "  no death or retry history on this message")
	}
}

// payload is the redacted payload, or the clear one after a reveal; a
// reveal scrolls to payloadAt.
func (m *Message) payload(p *page) {
	t := m.msg
	head := "payload (" + Plural(t.PayloadBytes, "byte")
	if d := t.Decoding; d != nil { // our words and numbers, no message text
		head = "payload (" + d.String()
	}
	if ct := sanitize.Line(t.Message.Properties.ContentType); ct != "" {
		head += ", " + ct
	}
	switch {
	case t.Redactions > 0 && m.Revealed():
		head += ", " + Plural(t.Redactions, "redacted value") + " revealed"
	case t.Redactions > 0:
		head += ", " + Plural(t.Redactions, "value") + " redacted"
	}
	if t.Binary {
		head += ", binary, shown as hex"
	}
	p.section(head + ")")
	m.payloadAt = len(p.lines) - 1
	switch {
	case m.Revealed():
		p.lines = append(p.lines, p.st.Warn.Render(ansi.Truncate(fmt.Sprintf(
			"  REVEALED, unredacted: journal entry #%d names you; leaving this screen hides it", m.revealSeq), p.width, "…")))
		p.text(sanitize.Text(m.revealed)) // still sanitised: the payload is the sender's
	case t.Payload == "":
		p.lines = append(p.lines, "  (empty)")
	default:
		p.text(sanitize.Text(t.Payload)) // triage did it already; the screen is the last line of defence
	}
}

// AttemptsText is how many times the message was tried. A message that
// died of maxlen or expiry was never a failed delivery: with no count
// recorded it shows "—", not a misleading 0.
func AttemptsText(t triage.Triaged) string {
	if t.Attempts == 0 && (t.Reason == triage.ReasonMaxlen || t.Reason == triage.ReasonExpired) {
		return "—"
	}
	return strconv.Itoa(t.Attempts)
}

// headerSection lists the headers but x-death (the timeline shows it).
func (m *Message) headerSection(p *page) {
	s := sanitize.Line
	keys := make([]string, 0, len(m.headers))
	for k := range m.headers {
		if k == "x-death" {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	head := fmt.Sprintf("headers (%d", len(keys))
	if m.hidden > 0 {
		head += ", " + Plural(m.hidden, "value") + " redacted"
	}
	p.section(head + ")")
	for _, k := range keys {
		v := s(HeaderValue(m.headers[k]))
		if m.trace != "" && k == m.traceFrom {
			v = "(shown above as the stack trace)" // not again on one line, with \n for its newlines
		}
		p.hanging(s(k)+": "+v, 4)
	}
	if len(keys) == 0 {
		p.lines = append(p.lines, "  (none)")
	}
}

// when is an absolute time with its age: "2026-11-30 10:37:02Z (5m ago)".
func when(now, t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return stamp(t) + " (" + ago(now, t) + ")"
}

// timelineLine is one step of the attempt timeline.
func timelineLine(e triage.Event) string {
	s := sanitize.Line
	parts := []string{Fit(stamp(e.Time), 20), Fit(string(e.Kind), 11)}
	if e.Queue != "" {
		parts = append(parts, s(e.Queue))
	}
	if e.Reason != "" {
		parts = append(parts, s(e.Reason))
	}
	if e.Count > 0 {
		parts = append(parts, fmt.Sprintf("×%d", e.Count))
	}
	if e.Detail != "" {
		parts = append(parts, s(e.Detail))
	}
	return strings.Join(parts, " ")
}

// HeaderValue renders an AMQP header value on one line.
func HeaderValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if x == "" {
			return `""` // an empty value is still a value, not a rendering gap
		}
		return x
	case []byte:
		return fmt.Sprintf("%d bytes: %x", len(x), x[:min(len(x), 32)])
	case time.Time:
		return stamp(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = HeaderValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case triage.Headers:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + HeaderValue(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case map[string]any:
		return HeaderValue(triage.Headers(x))
	default:
		return fmt.Sprint(x)
	}
}
