package ui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
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
	read    bool      // FreeReads: every queue was read for its ages
}

// freeReadMsg is one queue of a snapshot read for its messages' times.
type freeReadMsg struct {
	queue string
	insp  triage.Inspection
	ages  views.ReadAges
}

func (freeReadMsg) owner() screenID { return screenQueues }

// freeReadLimit bounds the startup read of each queue of a snapshot: the
// head of a queue holds its oldest messages, and a big file is scanned
// once per queue.
const freeReadLimit = 200

// readAll reads the head of every queue of a snapshot once, one queue after
// the other, for the death times the broker's head timestamp cannot give;
// never on a live broker, where a read is never free (a quorum queue
// counts it as a delivery).
func (s *queuesScreen) readAll(qs []triage.ParkingQueue) tea.Cmd {
	if !s.c.opts.FreeReads || s.read {
		return nil
	}
	s.read = true
	cmds := make([]tea.Cmd, 0, len(qs))
	for _, q := range qs {
		cmds = append(cmds, func() tea.Msg {
			opts := triage.BrowseOptions{Limit: freeReadLimit}
			insp, err := s.c.eng.inspect(s.c.base, s.c.opts.Reader, q.Name, opts, s.c.opts.Redactor)
			if err != nil {
				return nil // the queue says unread, as it would have
			}
			return freeReadMsg{queue: q.Name, insp: insp, ages: views.AgesOf(insp.List())}
		})
	}
	return tea.Sequence(cmds...)
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
		return s, s.onParking(msg)
	case freeReadMsg:
		// the reads land at startup, before anyone chose a row: the cursor
		// stays on the top one while they reorder the list
		i, _ := s.Table().Selected()
		s.NoteRead(msg.queue, &msg.insp, msg.ages)
		if i == 0 {
			s.Table().Select(0)
		}
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

func (s *queuesScreen) onParking(msg parkingMsg) tea.Cmd {
	if msg.id != s.listReq {
		return nil
	}
	s.listReq = 0
	if msg.err != nil {
		s.SetFailed()
		s.c.setErr(fmt.Errorf("listing parking queues: %w", msg.err))
		return nil
	}
	s.c.setErr(nil) // the last error is the last operation's: this one worked
	s.SetDoctor(msg.findings)
	s.c.broker = msg.broker
	s.SetBroker(msg.broker)
	s.SetQueues(msg.queues, s.health.record(msg.queues, msg.at))
	if s.c.focus != screenQueues {
		s.SelectName(s.flow.groups.Queue())
	}
	return s.readAll(msg.queues)
}
