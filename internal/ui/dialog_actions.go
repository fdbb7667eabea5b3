package ui

import (
	"fmt"

	"charm.land/bubbles/v2/textinput"

	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// reasonPrompt asks why the target is discarded; it takes every key.
type reasonPrompt struct {
	input   textinput.Model
	tg      target
	refused string // why enter was refused, until the next key
}

func newReasonPrompt(ctx *views.Context, tg target, width int) reasonPrompt {
	return reasonPrompt{input: newInput(ctx, "reason: ", "(e.g. duplicate of INC-1234, fixed upstream)", 120, width), tg: tg}
}

func newInput(ctx *views.Context, prompt, placeholder string, limit, width int) textinput.Model {
	in := textinput.New()
	in.Prompt = prompt
	in.Placeholder = placeholder
	in.CharLimit = limit
	in.SetStyles(ctx.Styles.Input)
	in.SetWidth(max(min(width-14, 60), 10))
	in.Focus()
	return in
}

func (p reasonPrompt) view(ctx *views.Context, width int) string {
	lines := []string{
		fmt.Sprintf("Discard %s from %s", views.Plural(len(p.tg.ids), "message"), sanitize.Line(p.tg.queue)),
		"(" + p.tg.what + ")",
		"",
		p.input.View(),
		"",
	}
	if p.refused != "" {
		lines = append(lines, ctx.Styles.Error.Render("refused: "+p.refused), "")
	}
	lines = append(lines, "enter: next (asks to confirm)    esc: cancel")
	return box(ctx, width, lines)
}

// discardConfirm is the last word before a discard.
type discardConfirm struct {
	tg     target
	reason string
}

func (d discardConfirm) view(ctx *views.Context, width int) string {
	k := ctx.Keys
	lines := []string{
		"Discard for good?",
		"",
		"messages  " + views.Plural(len(d.tg.ids), "message") + " (" + d.tg.what + ")",
		"from      " + sanitize.Line(d.tg.queue),
		"reason    " + sanitize.Line(d.reason),
		"",
		"They are acked and gone from the broker; every other message is",
		"put back in its place. The journal records the decision and the",
		"outcome. Only these ids are taken, even if more arrived since.",
		"",
		fmt.Sprintf("%s discard    %s: cancel", k.Confirm.Help().Key, k.Cancel.Help().Key),
	}
	return box(ctx, width, lines)
}

// startConfirm asks before a replay publishes anything.
type startConfirm struct {
	plan replay.Plan
}

func (d startConfirm) view(ctx *views.Context, width int) string {
	k := ctx.Keys
	p := d.plan
	dest := "each message's original route"
	if len(p.Destinations) == 1 {
		dest = sanitize.Line(p.Destinations[0].Route.String())
	}
	o := p.Options
	lines := []string{
		"Start the replay?",
		"",
		"messages  " + views.Plural(len(p.Items), "message") + " from " + sanitize.Line(p.Queue),
		"to        " + dest,
		fmt.Sprintf("canary    %d at %.1f msg/s, then %s of watching", o.Canary, o.CanaryRate, o.Observe),
		fmt.Sprintf("then      your call: %s ramps up to %.1f msg/s, %s aborts",
			k.RampUp.Help().Key, o.Rate, k.Abort.Help().Key),
		"",
		"A source is acked only after its copy is confirmed. If dlqt is",
		"killed midway, the replay can be resumed; a duplicate is possible.",
		"",
		fmt.Sprintf("%s start    %s: cancel", k.Confirm.Help().Key, k.Cancel.Help().Key),
	}
	return box(ctx, width, lines)
}

// abortConfirm asks before aborting a running replay (and, with quit,
// before leaving dlqt once it stopped).
type abortConfirm struct {
	quit bool
}

func (d abortConfirm) view(ctx *views.Context, width int, queue string) string {
	k := ctx.Keys
	title := "Abort the replay?"
	yes := "abort"
	if d.quit {
		title, yes = "A replay is running: quitting aborts it.", "abort and quit"
	}
	lines := []string{
		title,
		"",
		"Nothing more is published. Copies already sent stay sent; what",
		"was not published stays in " + sanitize.Line(queue) + ".",
		"",
		fmt.Sprintf("%s %s    %s: keep it running", k.Confirm.Help().Key, yes, k.Cancel.Help().Key),
	}
	return box(ctx, width, lines)
}

// planField is a dry-run setting the operator may change.
type planField int

const (
	fieldDestination planField = iota
	fieldCanary
	fieldObserve
	fieldRate
)

// editPrompt changes one setting of the dry run; it takes every key.
type editPrompt struct {
	field   planField
	input   textinput.Model
	refused string
}

func newEditPrompt(ctx *views.Context, f planField, value string, width int) editPrompt {
	prompts := map[planField][2]string{
		fieldDestination: {"destination: ", "EXCHANGE:ROUTING_KEY (empty: original routes)"},
		fieldCanary:      {"canary size: ", "messages, e.g. 5"},
		fieldObserve:     {"observe for: ", "e.g. 30s, 2m"},
		fieldRate:        {"max rate: ", "msg/s, e.g. 50"},
	}
	in := newInput(ctx, prompts[f][0], prompts[f][1], 200, width)
	in.SetValue(value)
	return editPrompt{field: f, input: in}
}

func (p editPrompt) view(ctx *views.Context, width int) string {
	lines := []string{"Change the replay plan", "", p.input.View(), ""}
	if p.field == fieldDestination {
		lines = append(lines, "A route other than the messages' own must match replay.allow.", "")
	}
	if p.refused != "" {
		lines = append(lines, ctx.Styles.Error.Render("refused: "+p.refused), "")
	}
	lines = append(lines, "enter: apply (the dry run is planned again)    esc: cancel")
	return box(ctx, width, lines)
}
