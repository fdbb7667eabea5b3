package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// discardFlow asks why, asks to confirm, then discards the target and
// reads the queue again. It owns the discard request in flight.
type discardFlow struct {
	c           *programContext
	flow        *browseFlow
	req         int            // discard awaited, 0 when none
	refreshList func() tea.Cmd // reads the queue list again: its depth changed
}

func (d *discardFlow) inFlight() bool { return d.req != 0 }

// begin asks for the reason of discarding tg.
func (d *discardFlow) begin(tg target) { d.c.dialog = newReasonPrompt(d, tg) }

// reasonPrompt asks why the target is discarded; an empty reason never
// reaches the confirmation.
type reasonPrompt struct {
	prompt
	tg target
}

func newReasonPrompt(d *discardFlow, tg target) *reasonPrompt {
	p := &reasonPrompt{prompt: newPrompt(d.c, "reason: ", "(e.g. duplicate of INC-1234, fixed upstream)", 120, d.c.width-14), tg: tg}
	p.head = []string{
		fmt.Sprintf("Discard %s from %s", views.Plural(len(tg.ids), "message"), sanitize.Line(tg.queue)),
		"(" + tg.what + ")",
		"ids: " + views.IDList(tg.ids, d.c.width-20),
	}
	p.keys = "enter: next (asks to confirm)    esc: cancel"
	p.submit = func(reason string) (dialog, tea.Cmd, error) {
		if reason == "" {
			return nil, nil, errors.New("a reason is required: the journal keeps why messages were dropped")
		}
		return &discardConfirm{flow: d, tg: tg, reason: reason}, nil, nil
	}
	return p
}

func (p *reasonPrompt) Update(msg tea.Msg) (dialog, tea.Cmd) { return p.handle(p, msg) }

// discardConfirm is the last word before a discard.
type discardConfirm struct {
	flow   *discardFlow
	tg     target
	reason string
}

func (d *discardConfirm) View(width int) string {
	k := d.flow.c.Keys
	lines := []string{
		"Discard for good?",
		"",
		"messages  " + views.Plural(len(d.tg.ids), "message") + " (" + d.tg.what + ")",
		"ids       " + views.IDList(d.tg.ids, width-20),
		"from      " + sanitize.Line(d.tg.queue),
		"reason    " + sanitize.Line(d.reason),
		"",
		"They are acked and gone from the broker; every other message is",
		"put back in its place. The journal records the decision and the",
		"outcome. Only these ids are taken, even if more arrived since.",
		"",
		confirmKeys(k, "discard"),
	}
	return box(d.flow.c.Context, width, lines)
}

func (d *discardConfirm) Update(msg tea.Msg) (dialog, tea.Cmd) {
	return confirm(d.flow.c, d, msg, func() tea.Cmd { return d.flow.run(d.tg, d.reason) },
		func() { d.flow.c.done = "discard cancelled: nothing changed" })
}

// run discards tg's ids from the broker, journalled with reason.
func (d *discardFlow) run(tg target, reason string) tea.Cmd {
	c := d.c
	if err := c.mayAct("discard"); err != nil {
		c.setErr(err)
		return nil
	}
	if cmd, ok := c.proposeInstead(approval.GateDiscard, tg, d.flow.groups.Inspection(), approval.Plan{Reason: reason, Selection: tg.what}); ok {
		return cmd
	}
	req := triage.DiscardRequest{
		Vhost: c.vhost(d.flow.groups.Inspection()), Queue: tg.queue, Reason: reason,
		Selection: triage.Selection{IDs: tg.ids},
		Browse:    triage.BrowseOptions{Limit: d.flow.readLimit(), AcceptDeliveryCost: d.flow.acceptCost(tg.queue)},
	}
	d.req = c.nextID()
	c.busy = "discarding " + views.Plural(len(tg.ids), "message") + " from " + sanitize.Line(tg.queue) + "…"
	return discardCmd(c.base, c.eng, c.opts.Reader, c.opts.Actions.Sweeper, c.recorderFor(tg), req, d.req)
}

// discardedMsg answers a discard.
type discardedMsg struct {
	id    int
	queue string
	res   triage.DiscardResult
	err   error
}

func (discardedMsg) owner() screenID { return screenGroups }

func discardCmd(ctx context.Context, e engine, r triage.Reader, s triage.Sweeper, rec triage.Recorder, req triage.DiscardRequest, id int) tea.Cmd {
	return func() tea.Msg {
		top, err := r.Topology(ctx)
		if err != nil {
			return discardedMsg{id: id, queue: req.Queue, err: err}
		}
		res, err := e.discard(ctx, s, top, rec, req)
		return discardedMsg{id: id, queue: req.Queue, res: res, err: err}
	}
}

// onDone says what was discarded and reads the queue again.
func (d *discardFlow) onDone(msg discardedMsg) tea.Cmd {
	if msg.id != d.req {
		return nil
	}
	c := d.c
	d.req, c.busy = 0, ""
	q := sanitize.Line(msg.queue)
	done := fmt.Sprintf("discarded %d from %s", len(msg.res.Discarded), q)
	if n := len(msg.res.Missing); n > 0 {
		done += fmt.Sprintf("; %d no longer there: %s", n, strings.Join(sanitize.Lines(msg.res.Missing), ", "))
	}
	if len(msg.res.Discarded) > 0 && !msg.res.Verified {
		done += "; " + sanitize.Line(msg.res.Verification) // the broker has not shown them gone
	}
	var cost *triage.DeliveryCostError
	switch {
	case errors.As(msg.err, &cost):
		c.setErr(fmt.Errorf("discard not done: %v; open the queue and accept the delivery cost first", cost))
		return nil
	case msg.err != nil:
		c.setErr(fmt.Errorf("discard: %w", msg.err))
		if len(msg.res.Discarded) == 0 {
			return nil
		}
	default:
		c.setErr(nil)
	}
	c.done = done
	d.flow.messages.ClearMarks()
	d.flow.noteChange(msg.queue)
	list := d.refreshList()
	if d.flow.groups.Queue() != msg.queue || c.focus == screenQueues {
		return list
	}
	return tea.Batch(list, d.flow.start(msg.queue, d.flow.acceptCost(msg.queue)))
}
