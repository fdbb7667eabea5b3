package ui

import (
	"fmt"
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// startConfirm asks before a replay publishes anything.
type startConfirm struct {
	replay *replayScreen
	plan   replay.Plan
}

func (d *startConfirm) View(width int) string {
	k := d.replay.c.Keys
	p := d.plan
	dest := "each message's original route"
	if len(p.Destinations) == 1 {
		dest = sanitize.Line(p.Destinations[0].Route.String())
		if h := p.Destinations[0].RetryBucket; h != nil && p.Destinations[0].Original {
			dest += ", " + views.BucketRoute(*h) // what the route is: a wait before the work queue
		}
	}
	o := p.Options
	lines := []string{
		"Start the replay?",
		"",
		"messages  " + views.Plural(p.Items.Len(), "message") + " from " + sanitize.Line(p.Queue),
		"ids       " + views.IDList(p.IDs(), width-20),
		"to        " + dest,
		fmt.Sprintf("canary    %d at %.1f msg/s, then %s of watching", o.Canary, o.CanaryRate, o.Observe),
		fmt.Sprintf("then      your call: %s ramps up to %.1f msg/s, %s aborts",
			k.RampUp.Help().Key, o.Rate, k.Abort.Help().Key),
		"",
		"A source is acked only after its copy is confirmed. If dlqt is",
		"killed midway, the replay can be resumed; a duplicate is possible.",
		"",
		confirmKeys(k, "start"),
	}
	return box(d.replay.c.Context, width, lines)
}

func (d *startConfirm) Update(msg tea.Msg) (dialog, tea.Cmd) {
	return confirm(d.replay.c, d, msg, func() tea.Cmd { return d.replay.startRun(d.plan) }, nil)
}

// abortConfirm asks before aborting a running replay (and, with quit,
// before leaving dlqt once it stopped).
type abortConfirm struct {
	replay *replayScreen
	quit   bool
}

func (d *abortConfirm) View(width int) string {
	k := d.replay.c.Keys
	title := "Abort the replay?"
	yes := "abort"
	if d.quit {
		title, yes = "A replay is running: quitting aborts it.", "abort and quit"
	}
	lines := []string{
		title,
		"",
		"Nothing more is published. Copies already sent stay sent; what",
		"was not published stays in " + sanitize.Line(d.replay.Plan().Queue) + ".",
		"",
		fmt.Sprintf("%s: %s    %s: keep it running", k.Confirm.Help().Key, yes, k.Cancel.Help().Key),
	}
	return box(d.replay.c.Context, width, lines)
}

func (d *abortConfirm) Update(msg tea.Msg) (dialog, tea.Cmd) {
	return confirm(d.replay.c, d, msg, func() tea.Cmd { return d.replay.abort(d.quit) }, nil)
}

// planField is a dry-run setting the operator may change.
type planField int

const (
	fieldDestination planField = iota
	fieldCanary
	fieldObserve
	fieldRate
)

// editPrompt changes one setting of the dry run.
type editPrompt struct {
	prompt
	field planField
}

func newEditPrompt(s *replayScreen, f planField, value string) *editPrompt {
	prompts := map[planField][2]string{
		fieldDestination: {"destination: ", "EXCHANGE:ROUTING_KEY (empty: original routes)"},
		fieldCanary:      {"canary size: ", "messages, e.g. 5"},
		fieldObserve:     {"observe for: ", "e.g. 30s, 2m"},
		fieldRate:        {"max rate: ", "msg/s, e.g. 50"},
	}
	p := &editPrompt{prompt: newPrompt(s.c, prompts[f][0], prompts[f][1], 200, s.c.width-14), field: f}
	p.input.SetValue(value)
	p.head = []string{"Change the replay plan"}
	if f == fieldDestination {
		p.notes = []string{"A route other than the messages' own must match replay.allow."}
	}
	p.keys = "enter: apply (the dry run is planned again)    esc: cancel"
	p.submit = func(v string) (dialog, tea.Cmd, error) { return nil, nil, s.apply(f, v) }
	return p
}

func (p *editPrompt) Update(msg tea.Msg) (dialog, tea.Cmd) { return p.handle(p, msg) }

func applyField(o *replay.Options, f planField, v string) error {
	switch f {
	case fieldDestination:
		if v == "" {
			o.To = nil
			return nil
		}
		r, err := triage.ParseRoute(v)
		if err != nil {
			return err
		}
		o.To = &r
	case fieldCanary:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("canary size %q: want a whole number, at least 1", v)
		}
		o.Canary = n
	case fieldObserve:
		d, err := time.ParseDuration(v)
		if n, nerr := strconv.Atoi(v); nerr == nil { // plain seconds
			d, err = time.Duration(n)*time.Second, nil
		}
		if err != nil || d <= 0 {
			return fmt.Errorf("observe %q: want a duration such as 30s or 2m", v)
		}
		o.Observe = d
	case fieldRate:
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || !replay.UsableRate(r) {
			return fmt.Errorf("rate %q: want messages per second, above 0", v)
		}
		o.Rate = r
	}
	return nil
}
