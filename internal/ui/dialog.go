package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

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

// confirm is Update for a confirmation self: the confirm key runs yes, any
// other key runs no (when there is one); either closes it. What is not a
// key (a paste) is no answer and leaves it open.
func confirm(c *programContext, self dialog, msg tea.Msg, yes func() tea.Cmd, no func()) (dialog, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	switch {
	case !ok:
		return self, nil
	case key.Matches(k, c.Keys.Confirm):
		return nil, yes()
	case no != nil:
		no()
	}
	return nil, nil
}

// prompt is the text input of every dialog that asks for words (a tag, a
// reason, a plan setting). It takes every key: esc cancels, enter submits
// the trimmed text, which submit may refuse with a reason shown under the
// input until the next key.
type prompt struct {
	c       *programContext
	input   textinput.Model
	head    []string // the lines over the input
	notes   []string // lines under it
	keys    string   // the last line: what enter and esc do
	refused string
	// submit returns the dialog that follows (nil: closed) and its command,
	// or why the text is refused.
	submit func(text string) (dialog, tea.Cmd, error)
}

// newPrompt makes a focused input of inputWidth cells.
func newPrompt(c *programContext, label, placeholder string, limit, inputWidth int) prompt {
	in := textinput.New()
	in.Prompt = label
	in.Placeholder = placeholder
	in.CharLimit = limit
	in.SetStyles(c.Styles.Input)
	in.SetWidth(max(min(inputWidth, 60), 10))
	in.Focus()
	return prompt{c: c, input: in}
}

// handle is Update for the dialog self that embeds the prompt.
func (p *prompt) handle(self dialog, msg tea.Msg) (dialog, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "esc":
			return nil, nil
		case "enter":
			next, cmd, err := p.submit(strings.TrimSpace(p.input.Value()))
			if err != nil {
				p.refused = err.Error()
				return self, nil
			}
			return next, cmd
		}
		p.refused = ""
	}
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(msg)
	return self, cmd
}

func (p *prompt) View(width int) string {
	lines := append(append([]string{}, p.head...), "", p.input.View(), "")
	for _, n := range p.notes {
		lines = append(lines, n, "")
	}
	if p.refused != "" {
		lines = append(lines, p.c.Styles.Error.Render("refused: "+p.refused), "")
	}
	return box(p.c.Context, width, append(lines, p.keys))
}

// tagPrompt asks for the tag of one message; an empty one saves nothing.
type tagPrompt struct{ prompt }

func newTagPrompt(f *browseFlow, messageID string) *tagPrompt {
	c := f.c
	p := &tagPrompt{newPrompt(c, "tag: ", "(e.g. poison, needs-fix, ticket-1234)", 64, c.width-12)}
	p.head = []string{"Tag message " + sanitize.Line(messageID)}
	p.keys = "enter: save to the journal    esc: cancel"
	queue := f.groups.Queue()
	p.submit = func(tag string) (dialog, tea.Cmd, error) {
		if tag == "" {
			return nil, nil, nil
		}
		e := c.entry(triage.ActionTag, c.vhost(f.groups.Inspection()), queue, messageID, tag)
		return nil, tagCmd(c.opts.Journal, e), nil
	}
	return p
}

func (p *tagPrompt) Update(msg tea.Msg) (dialog, tea.Cmd) { return p.handle(p, msg) }

// costDialog asks before browsing a quorum queue with a delivery limit:
// the read itself can push messages past the limit.
type costDialog struct {
	flow *browseFlow
	cost *triage.DeliveryCostError
}

func (d *costDialog) View(width int) string {
	c := d.cost
	name := sanitize.Line(c.Queue)
	limit := fmt.Sprintf("delivery limit  %d", c.Limit)
	if c.Default {
		limit += " (RabbitMQ's default: the queue sets none)"
	}
	lines := []string{
		"Browse a quorum queue with a delivery limit?",
		"",
		fmt.Sprintf("queue           %s", name),
		limit,
		"depth           " + views.Plural(c.Depth, "message"),
		"",
		"Every read adds 1 to each message's delivery count. A message that",
		"passes the limit is dead-lettered, or dropped if the queue has no",
		"dead-letter exchange. The messages list then shows each message's",
		"delivery count against the limit.",
		"",
		fmt.Sprintf("%s: browse anyway    any other key: go back", d.flow.c.Keys.Confirm.Help().Key),
	}
	return box(d.flow.c.Context, width, lines)
}

// Update browses anyway on yes; any other key goes back, to the queue list
// when nothing of the queue was read yet.
func (d *costDialog) Update(msg tea.Msg) (dialog, tea.Cmd) {
	f, queue := d.flow, d.cost.Queue
	return confirm(f.c, d, msg, func() tea.Cmd {
		f.costAccepted = queue
		return f.start(queue, true)
	}, func() {
		if f.groups.Inspection() == nil {
			f.c.focus = screenQueues
			f.queues.SelectName(queue)
		}
	})
}

// confirmKeys is a confirm dialog's key line, spelt as every dialog's
// keys are: "y: discard    n/esc: cancel".
func confirmKeys(k KeyMap, action string) string {
	return fmt.Sprintf("%s: %s    %s: cancel", k.Confirm.Help().Key, action, k.Cancel.Help().Key)
}
