package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/views"
)

// proposalsScreen lists the proposals of the journal; y runs the approved
// one under the cursor, as `dlqt run ID --yes` does.
type proposalsScreen struct {
	*views.Proposals
	returnTo
	plainFilter
	c       *programContext
	req     int    // read awaited
	running string // proposal being run, "" when none
	states  map[string]approval.State
	// approvers are who may approve each undecided proposal, by id, read
	// with the proposals (the users file is read off Update).
	approvers map[string][]string
}

// proposalsMsg answers a read of the proposals.
type proposalsMsg struct {
	id        int
	states    []approval.State
	approvers map[string][]string // who may approve each undecided one
	err       error
}

// proposedMsg answers a proposal made instead of an action.
type proposedMsg struct {
	id, action string
	count      int
	err        error
}

// proposalRunMsg answers a run of an approved proposal.
type proposalRunMsg struct {
	id, summary string
	err         error
}

func (proposalsMsg) owner() screenID   { return screenProposals }
func (proposedMsg) owner() screenID    { return screenProposals }
func (proposalRunMsg) owner() screenID { return screenProposals }

// list is the table the list keys work on; none while a proposal is
// shown whole, whose keys scroll it.
func (s *proposalsScreen) list() *views.Table {
	if _, ok := s.Detailed(); ok {
		return nil
	}
	return s.Table()
}

func (s *proposalsScreen) inFlight() bool { return s.running != "" }

// open shows the proposals from any screen; back returns there.
func (s *proposalsScreen) open() tea.Cmd {
	if s.c.opts.Approvals == nil {
		s.c.setErr(errors.New("proposals: the config has no approvals section, so nothing waits for a second person"))
		return nil
	}
	if s.c.focus == screenReplay {
		return nil
	}
	s.visit(s.c, screenProposals)
	return s.reload()
}

func (s *proposalsScreen) reload() tea.Cmd {
	s.SetLoading()
	s.req = s.c.nextID()
	read, who, id := s.c.opts.Approvals.Proposals, s.c.opts.Approvals.Approvers, s.req
	return func() tea.Msg {
		states, err := read()
		approvers := map[string][]string{}
		for _, st := range states {
			if who != nil && len(st.Decisions) == 0 {
				approvers[st.Proposal.ID] = who(st.Proposal.Teams, st.Proposal.Proposer)
			}
		}
		return proposalsMsg{id: id, states: states, approvers: approvers, err: err}
	}
}

func (s *proposalsScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	switch msg := msg.(type) {
	case proposalsMsg:
		s.onProposals(msg)
		return s, nil
	case proposedMsg:
		s.onProposed(msg)
		return s, nil
	case proposalRunMsg:
		return s, s.onRun(msg)
	}
	return s, listUpdate(s, &s.c.Keys, msg)
}

func (s *proposalsScreen) key(k tea.KeyPressMsg) tea.Cmd {
	keys := s.c.Keys
	_, detailed := s.Detailed()
	switch {
	case key.Matches(k, keys.Back) && detailed:
		s.HideDetail()
	case key.Matches(k, keys.Back):
		s.leave(s.c)
	case key.Matches(k, keys.Open) && !detailed:
		if row, ok := s.Selected(); ok {
			s.showDetail(row.ID)
		}
	case key.Matches(k, keys.Refresh):
		return s.reload()
	case key.Matches(k, keys.RunProposal):
		return s.run()
	default:
		return s.Proposals.Update(k)
	}
	return nil
}

// showDetail shows proposal id whole, as read last.
func (s *proposalsScreen) showDetail(id string) {
	st, ok := s.states[id]
	if !ok {
		s.HideDetail()
		return
	}
	s.ShowDetail(id, st.Describe(s.c.now(), s.approvers[id]))
}

// selected is the proposal shown whole, else the one under the cursor.
func (s *proposalsScreen) selected() (views.ProposalRow, bool) {
	if id, ok := s.Detailed(); ok {
		for _, r := range s.Rows() {
			if r.ID == id {
				return r, true
			}
		}
		return views.ProposalRow{}, false
	}
	return s.Selected()
}

// run runs the approved proposal shown, or under the cursor, in the
// background.
func (s *proposalsScreen) run() tea.Cmd {
	row, ok := s.selected()
	switch {
	case !ok:
		return nil
	case s.running != "":
		s.c.setErr(fmt.Errorf("proposal %s is running", s.running))
		return nil
	case row.Status != string(approval.StatusApproved):
		s.c.setErr(fmt.Errorf("proposal %s is %s: only an approved proposal runs (dlqt approve %s, by someone else)", row.ID, row.Status, row.ID))
		return nil
	}
	if err := s.c.mayAct("run a proposal"); err != nil {
		s.c.setErr(err)
		return nil
	}
	s.running = row.ID
	s.SetStatus("running proposal " + row.ID + "…")
	ctx, runFn, id := s.c.base, s.c.opts.Approvals.Run, row.ID
	return func() tea.Msg {
		summary, err := runFn(ctx, id)
		return proposalRunMsg{id: id, summary: summary, err: err}
	}
}

func (s *proposalsScreen) onRun(msg proposalRunMsg) tea.Cmd {
	s.running = ""
	s.SetStatus("")
	if msg.err != nil {
		s.c.setErr(fmt.Errorf("proposal %s: %w", msg.id, msg.err))
	} else {
		s.c.done = "proposal " + msg.id + " run: " + msg.summary
	}
	return s.reload()
}

func (s *proposalsScreen) onProposals(msg proposalsMsg) {
	if msg.id != s.req {
		return
	}
	s.req = 0
	if msg.err != nil {
		s.c.setErr(fmt.Errorf("reading the proposals: %w", msg.err))
		return
	}
	now := s.c.now()
	rows := make([]views.ProposalRow, len(msg.states))
	s.states = make(map[string]approval.State, len(msg.states))
	s.approvers = msg.approvers
	for i, st := range msg.states {
		s.states[st.Proposal.ID] = st
		p := st.Proposal
		rows[i] = views.ProposalRow{ID: p.ID, Status: string(st.Status(now)), Action: p.Action, Count: len(p.MessageIDs),
			Queue: p.Queue, Proposer: p.Proposer, DecidedBy: decidedBy(st), Expires: p.ExpiresAt}
	}
	s.SetRows(rows)
	if id, ok := s.Detailed(); ok {
		s.showDetail(id) // a run or a refresh changed what it says
	}
}

func decidedBy(st approval.State) string {
	if len(st.Decisions) == 0 {
		return ""
	}
	return st.Decisions[len(st.Decisions)-1].By
}

func (s *proposalsScreen) onProposed(msg proposedMsg) {
	s.c.busy = ""
	if msg.err != nil {
		s.c.setErr(fmt.Errorf("%s needs a second person, and the proposal failed: %w", msg.action, msg.err))
		return
	}
	s.c.done = fmt.Sprintf("%s of %s needs a second person: proposal %s journaled, nothing changed (P lists it; dlqt approve %s)",
		msg.action, views.Plural(msg.count, "message"), msg.id, msg.id)
}

// proposeInstead is the command that proposes action on tg instead of
// doing it, when the approvals policy asks a second person for it; ok is
// false when the action may go ahead.
func (c *programContext) proposeInstead(action string, tg target, insp *triage.Inspection, plan approval.Plan) (tea.Cmd, bool) {
	a := c.opts.Approvals
	if a == nil || !a.Needs(action, len(tg.ids)) {
		return nil, false
	}
	var msgs []triage.Triaged
	if insp != nil {
		chosen := make(map[string]bool, len(tg.ids))
		for _, id := range tg.ids {
			chosen[id] = true
		}
		for i := range insp.Len() {
			if t := insp.At(i); chosen[t.ID] {
				msgs = append(msgs, t)
			}
		}
	}
	ctx, count := c.base, len(tg.ids)
	c.busy = "proposing the " + action + "…"
	return func() tea.Msg {
		for i := range msgs { // index entries: the proposal keeps what it needs of the whole
			whole, err := msgs[i].Whole()
			if err != nil {
				return proposedMsg{action: action, count: count, err: err}
			}
			msgs[i] = whole
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		id, err := a.Propose(ctx, action, tg.queue, msgs, plan)
		return proposedMsg{id: id, action: action, count: count, err: err}
	}, true
}
