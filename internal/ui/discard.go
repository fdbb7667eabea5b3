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

// begin asks for the reason of discarding tg. When every message of tg is
// back after one discard of the journal (its ack was undone by a broker
// crash), the prompt offers that discard again: its reason is filled in,
// and kept, the discard is journaled as a retry of that entry.
func (d *discardFlow) begin(tg target) { d.c.dialog = newReasonPrompt(d, tg, d.retryOf(tg)) }

// retry is the earlier discard a new one would repeat.
type retry struct {
	seq    uint64
	reason string
}

// retryOf is the discard all of tg's messages are back from, if one is.
func (d *discardFlow) retryOf(tg target) *retry {
	var seq uint64
	for _, id := range tg.ids {
		s, ok := d.flow.back[id]
		if !ok || (seq != 0 && s != seq) {
			return nil
		}
		seq = s
	}
	j, ok := d.c.opts.Journal.(DiscardOutcomes)
	if seq == 0 || !ok {
		return nil
	}
	// one read of the local journal, as a message is read back from its spill file
	e, err := j.DiscardOutcome(seq, d.c.vhost(d.flow.groups.Inspection()), tg.queue)
	if err != nil || e.Reason == "" {
		return nil
	}
	return &retry{seq: seq, reason: e.Reason}
}

// reasonPrompt asks why the target is discarded; an empty reason never
// reaches the confirmation.
type reasonPrompt struct {
	prompt
	tg target
}

func newReasonPrompt(d *discardFlow, tg target, again *retry) *reasonPrompt {
	p := &reasonPrompt{prompt: newPrompt(d.c, "reason: ", "(e.g. duplicate of INC-1234, fixed upstream)", 120, d.c.width-14), tg: tg}
	p.head = []string{
		fmt.Sprintf("Discard %s from %s", views.Plural(len(tg.ids), "message"), sanitize.Line(tg.queue)),
		"(" + tg.what + ")",
		"ids: " + views.IDList(tg.ids, d.c.width-20),
	}
	if again != nil {
		p.head = append(p.head, "",
			fmt.Sprintf("Discarded in journal #%d, and back (the broker undid the ack).", again.seq),
			"Its reason is filled in: enter discards them again as a retry of #"+fmt.Sprint(again.seq)+".")
		p.input.SetValue(sanitize.Line(again.reason))
		p.input.CursorEnd()
	}
	p.keys = "enter: next (asks to confirm)    esc: cancel"
	p.submit = func(reason string) (dialog, tea.Cmd, error) {
		if reason == "" {
			return nil, nil, errors.New("a reason is required: the journal keeps why messages were dropped")
		}
		c := &discardConfirm{flow: d, tg: tg, reason: reason}
		if again != nil && reason == again.reason {
			c.retryOf = again.seq // a changed reason is a new decision, not a retry
		}
		return c, nil, nil
	}
	return p
}

func (p *reasonPrompt) Update(msg tea.Msg) (dialog, tea.Cmd) { return p.handle(p, msg) }

// discardConfirm is the last word before a discard.
type discardConfirm struct {
	flow    *discardFlow
	tg      target
	reason  string
	retryOf uint64 // the journal entry of the discard this one repeats, 0: none
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
	}
	if d.retryOf != 0 {
		lines = append(lines, fmt.Sprintf("retry of  journal entry #%d", d.retryOf))
	}
	lines = append(lines,
		"",
		"They are acked and gone from the broker; every other message is",
		"put back in its place. The journal records the decision and the",
		"outcome. Only these ids are taken, even if more arrived since.",
		"",
		confirmKeys(k, "discard"),
	)
	return box(d.flow.c.Context, width, lines)
}

func (d *discardConfirm) Update(msg tea.Msg) (dialog, tea.Cmd) {
	return confirm(d.flow.c, d, msg, func() tea.Cmd { return d.flow.run(d.tg, d.reason, d.retryOf) },
		func() { d.flow.c.done = "discard cancelled: nothing changed" })
}

// run discards tg's ids from the broker, journalled with reason (and as a
// retry of journal entry retryOf, unless 0).
func (d *discardFlow) run(tg target, reason string, retryOf uint64) tea.Cmd {
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
		Selection: triage.Selection{IDs: tg.ids}, RetryOf: retryOf,
		Browse: triage.BrowseOptions{Limit: d.flow.readLimit(), AcceptDeliveryCost: d.flow.acceptCost(tg.queue)},
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
