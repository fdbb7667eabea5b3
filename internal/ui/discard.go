package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// Actions is the live broker's write side, handed in by main. A snapshot
// or the demo has none: every action then says it needs a live broker.
type Actions struct {
	Sweeper triage.Sweeper
	// OpenReplay prepares the broker side of replay replayID of queue.
	// acceptCost is the user's consent to the delivery cost of holding a
	// quorum queue with a delivery limit.
	OpenReplay func(ctx context.Context, replayID, queue string, acceptCost bool) (replay.Port, error)
	// Allow is replay.allow from the config file.
	Allow []string
	// AcceptDeliveryCost is --accept-delivery-cost.
	AcceptDeliveryCost bool
}

// target is what an action applies to: always the ids the user saw, so a
// message that arrived after the last read is never touched.
type target struct {
	queue string
	ids   []string
	what  string // "group rejected/INVALID_SKU", "3 marked messages", "message m-1"
}

// target is the marked messages, else the selected message; on the groups
// screen the whole group as shown.
func (m *Model) target() (target, error) {
	insp := m.groups.Inspection()
	if insp == nil {
		return target{}, errors.New("nothing is read yet: open a queue first")
	}
	tg := target{queue: insp.Batch.Queue}
	switch m.screen {
	case screenGroups:
		g, ok := m.groups.Selected()
		if !ok {
			return target{}, errors.New("no group selected")
		}
		for _, i := range g.Members {
			tg.ids = append(tg.ids, insp.Messages[i].ID)
		}
		code := g.ReasonCode
		if code == "" {
			code = "(no reason_code)"
		}
		tg.what = fmt.Sprintf("group %s/%s", g.Reason, code)
		if f := m.groups.Filter(); !f.Empty() { // the group as filtered, and say so
			tg.what += " where " + f.String()
		}
	case screenMessages:
		if ids := m.messages.Marked(); len(ids) > 0 {
			tg.ids, tg.what = ids, views.Plural(len(ids), "marked message")
			break
		}
		t, ok := m.messages.Selected()
		if !ok {
			return target{}, errors.New("no message selected")
		}
		tg.ids, tg.what = []string{t.ID}, "message "+sanitize.Line(t.ID)
	case screenMessage:
		id := m.message.Shown().ID
		tg.ids, tg.what = []string{id}, "message "+sanitize.Line(id)
	default:
		return target{}, errors.New("open a queue's groups or messages first")
	}
	return tg, nil
}

// actionsReady says why an action cannot run here, or nil.
func (m *Model) actionsReady(action string) error {
	if m.opts.Actions == nil {
		if m.opts.ActionsOff != "" {
			return fmt.Errorf("%s is off: %s", action, m.opts.ActionsOff)
		}
		return fmt.Errorf("%s needs a live broker: this is a snapshot, read-only (run dlqt without --demo or --snapshot)", action)
	}
	if m.opts.Journal == nil {
		err := m.opts.JournalErr
		if err == nil {
			err = errors.New("no journal is open")
		}
		return fmt.Errorf("%s is off: it is journalled and %w", action, err)
	}
	if m.discardReq != 0 || m.run != nil {
		return fmt.Errorf("%s waits: another action is still running", action)
	}
	return nil
}

// acceptCost is the delivery-cost consent for queue: the flag, or the
// dialog the user answered yes for this queue.
func (m *Model) acceptCost(queue string) bool {
	return (m.opts.Actions != nil && m.opts.Actions.AcceptDeliveryCost) || m.costAccepted == queue
}

// actionTarget is what an action applies to, once it may run here; when it
// may not, the reason is on the footer and ok is false.
func (m *Model) actionTarget(action string) (tg target, ok bool) {
	if err := m.actionsReady(action); err != nil {
		m.setErr(err)
		return tg, false
	}
	tg, err := m.target()
	if err != nil {
		m.setErr(fmt.Errorf("%s: %w", action, err))
		return tg, false
	}
	return tg, true
}

func (m *Model) startDiscard() tea.Cmd {
	if tg, ok := m.actionTarget("discard"); ok {
		m.dialog = newReasonPrompt(m.ctx, tg, m.width)
	}
	return nil
}

// reasonKey edits the reason; enter moves on to the confirmation, which an
// empty reason never reaches.
func (m *Model) reasonKey(d reasonPrompt, k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc":
		m.dialog = nil
		return nil
	case "enter":
		reason := strings.TrimSpace(d.input.Value())
		if reason == "" {
			d.refused = "a reason is required: the journal keeps why messages were dropped"
			m.dialog = d
			return nil
		}
		m.dialog = discardConfirm{tg: d.tg, reason: reason}
		return nil
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(k)
	d.refused = ""
	m.dialog = d
	return cmd
}

func (m *Model) confirmKey(d discardConfirm, k tea.KeyPressMsg) tea.Cmd {
	m.dialog = nil
	if !key.Matches(k, m.ctx.Keys.Confirm) {
		m.done = "discard cancelled: nothing changed"
		return nil
	}
	insp := m.groups.Inspection()
	req := triage.DiscardRequest{
		Vhost: m.vhost(insp), Queue: d.tg.queue, Reason: d.reason,
		Selection: triage.Selection{IDs: d.tg.ids},
		Browse:    triage.BrowseOptions{Limit: m.opts.BrowseLimit, AcceptDeliveryCost: m.acceptCost(d.tg.queue)},
	}
	m.discardReq = m.nextID()
	m.busy = "discarding " + views.Plural(len(d.tg.ids), "message") + " from " + sanitize.Line(d.tg.queue) + "…"
	rec := journal.NewRecorder(m.opts.Journal, m.opts.Actor, m.opts.Host)
	return discardCmd(m.base, m.eng, m.opts.Reader, m.opts.Actions.Sweeper, rec, req, m.discardReq)
}

// discardedMsg answers a discard.
type discardedMsg struct {
	id    int
	queue string
	res   triage.DiscardResult
	err   error
}

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

func (m *Model) onDiscarded(msg discardedMsg) tea.Cmd {
	if msg.id != m.discardReq {
		return nil
	}
	m.discardReq, m.busy = 0, ""
	q := sanitize.Line(msg.queue)
	done := fmt.Sprintf("discarded %d from %s", len(msg.res.Discarded), q)
	if n := len(msg.res.Missing); n > 0 {
		done += fmt.Sprintf("; %d no longer there: %s", n, strings.Join(sanitizeAll(msg.res.Missing), ", "))
	}
	var cost *triage.DeliveryCostError
	switch {
	case errors.As(msg.err, &cost):
		m.setErr(fmt.Errorf("discard not done: %v; open the queue and accept the delivery cost first", cost))
		return nil
	case msg.err != nil:
		m.setErr(fmt.Errorf("discard: %w", msg.err))
		if len(msg.res.Discarded) == 0 {
			return nil
		}
	default:
		m.setErr(nil)
	}
	m.done = done
	m.messages.ClearMarks()
	if m.groups.Queue() != msg.queue || m.screen == screenQueues {
		return nil
	}
	return m.startBrowse(msg.queue, m.acceptCost(msg.queue))
}

func sanitizeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = sanitize.Line(s)
	}
	return out
}
