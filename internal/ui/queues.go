package ui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/views"
)

// queuesScreen lists the parking queues; it owns the list request and the
// polls that measure each queue's inflow.
type queuesScreen struct {
	*views.Queues
	plainFilter
	c       *programContext
	flow    *browseFlow
	listReq int       // queue list awaited, 0 when none
	health  healthLog // per-queue ingress across polls
}

func newQueuesScreen(c *programContext, f *browseFlow) *queuesScreen {
	f.queues.SetPatterns(c.opts.Patterns)
	f.queues.SetHealth(c.opts.Health)
	return &queuesScreen{Queues: f.queues, c: c, flow: f, health: newHealthLog()}
}

func (s *queuesScreen) list() *views.Table { return s.Table() }

func (s *queuesScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	switch msg := msg.(type) {
	case parkingMsg:
		s.onParking(msg)
		return s, nil
	case pollMsg:
		return s, s.onPoll()
	case relistMsg:
		if s.listReq != 0 {
			return s, nil // a read in flight is as new
		}
		return s, s.refresh()
	}
	return s, listUpdate(s, &s.c.Keys, msg)
}

// key handles the screen's own keys, those the list left.
func (s *queuesScreen) key(k tea.KeyPressMsg) tea.Cmd {
	keys := s.c.Keys
	switch {
	case key.Matches(k, keys.Open):
		if q, ok := s.Selected(); ok {
			return s.flow.openQueue(q.Name)
		}
	case key.Matches(k, keys.Refresh):
		s.SetLoading(true)
		return s.refresh()
	case key.Matches(k, keys.Back): // the first screen: nothing above it
	default:
		return s.Queues.Update(k)
	}
	return nil
}

// refresh reads the queue list again.
func (s *queuesScreen) refresh() tea.Cmd {
	s.listReq = s.c.nextID()
	return listCmd(s.c.base, s.c.eng, s.c.opts.Reader, s.c.opts.Patterns, s.listReq, s.c.now)
}

func (s *queuesScreen) onParking(msg parkingMsg) {
	if msg.id != s.listReq {
		return
	}
	s.listReq = 0
	if msg.err != nil {
		s.SetFailed()
		s.c.setErr(fmt.Errorf("listing parking queues: %w", msg.err))
		return
	}
	s.c.setErr(nil) // the last error is the last operation's: this one worked
	s.SetDoctor(msg.findings)
	s.c.broker = msg.broker
	s.SetBroker(msg.broker)
	s.SetQueues(msg.queues, s.health.record(msg.queues, msg.at))
	if s.c.focus != screenQueues {
		s.SelectName(s.flow.groups.Queue())
	}
}
