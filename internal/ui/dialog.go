package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// costDialog asks before browsing a quorum queue with a delivery limit:
// the read itself can push messages past the limit.
type costDialog struct {
	cost *triage.DeliveryCostError
}

func (d costDialog) view(ctx *views.Context, width int) string {
	c := d.cost
	name := sanitize.Line(c.Queue)
	lines := []string{
		"Browse a quorum queue with a delivery limit?",
		"",
		fmt.Sprintf("queue           %s", name),
		fmt.Sprintf("delivery limit  %d", c.Limit),
		"depth           " + views.Plural(c.Depth, "message"),
		"",
		"Every read adds 1 to each message's delivery count. A message that",
		"passes the limit is dead-lettered, or dropped if the queue has no",
		"dead-letter exchange. The messages list then shows each message's",
		"delivery count against the limit.",
		"",
		fmt.Sprintf("%s browse anyway    any other key: go back", ctx.Keys.Confirm.Help().Key),
	}
	return box(ctx, width, lines)
}

// tagPrompt asks for the tag of one message.
type tagPrompt struct {
	input     textinput.Model
	queue     string
	messageID string
}

func newTagPrompt(ctx *views.Context, queue, messageID string, width int) tagPrompt {
	in := textinput.New()
	in.Prompt = "tag: "
	in.Placeholder = "(e.g. poison, needs-fix, ticket-1234)"
	in.CharLimit = 64
	in.SetStyles(ctx.Styles.Input)
	in.SetWidth(max(min(width-12, 60), 10))
	in.Focus()
	return tagPrompt{input: in, queue: queue, messageID: messageID}
}

func (p tagPrompt) view(ctx *views.Context, width int) string {
	lines := []string{
		"Tag message " + sanitize.Line(p.messageID),
		"",
		p.input.View(),
		"",
		"enter: save to the journal    esc: cancel",
	}
	return box(ctx, width, lines)
}

// box draws a dialog no wider than the screen.
func box(ctx *views.Context, width int, lines []string) string {
	inner := max(min(width-4, 72), 10)
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, inner, "…")
	}
	return ctx.Styles.Dialog.Render(strings.Join(lines, "\n"))
}

// place centres a dialog in the body area.
func place(w, h int, s string) string {
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, s)
}
