package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/views"
)

// The queues screen's rates and trends are measured here, across polls of
// the topology, rather than read from the management API's samples: on
// RabbitMQ 3.10.8 a dead-lettered message does not count in the parking
// queue's publish rate (checked: 30 dead letters, no message_stats at all),
// so the inflow of a parking queue only shows as its depth growing.

// defaultPoll matches the management API's default statistics interval:
// polling faster would read the same numbers twice.
const defaultPoll = 5 * time.Second

// maxHistory is how many polls a queue's trend keeps: 5 minutes at 5 s.
const maxHistory = 60

// pollMsg is the poll timer firing.
type pollMsg struct{}

func (pollMsg) owner() screenID { return screenQueues }

// pollTick arms the next poll; nil when polling is off.
func (s *queuesScreen) pollTick() tea.Cmd {
	every := s.c.opts.PollEvery
	if every < 0 {
		return nil
	}
	if every == 0 {
		every = defaultPoll
	}
	return tea.Tick(every, func(time.Time) tea.Msg { return pollMsg{} })
}

// onPoll re-reads the topology while the queues screen is shown (and no
// read is already in flight), then re-arms; it never blocks.
func (s *queuesScreen) onPoll() tea.Cmd {
	next := s.pollTick()
	if s.c.focus != screenQueues || s.listReq != 0 || s.c.dialog != nil {
		return next
	}
	return tea.Batch(s.refresh(), next)
}

// queueSample is what the polls saw of one queue.
type queueSample struct {
	depths  []depthAt // within growthWindow, oldest first
	ingress float64
	history []float64
}

type depthAt struct {
	depth int
	at    time.Time
}

// healthLog keeps each queue's ingress across polls.
type healthLog struct {
	queues map[string]*queueSample
}

func newHealthLog() healthLog { return healthLog{queues: map[string]*queueSample{}} }

// minGap is the shortest span that measures a growth: a refresh right
// after a poll keeps the last figure.
const minGap = time.Second

// growthWindow is the span the growth is measured over. The management API
// refreshes a queue's depth every 5 s, so poll-to-poll deltas alternate
// between nothing and double; 30 s of them read as the steady rate.
const growthWindow = 30 * time.Second

// record adds a poll read at `at` and returns each queue's trend. The
// ingress is the larger of the broker's publish rate and the depth growth
// over the last growthWindow: a queue being drained or discarded from shows
// its publish rate only, never a negative inflow.
func (h *healthLog) record(qs []triage.ParkingQueue, at time.Time) map[string]views.Trend {
	out := make(map[string]views.Trend, len(qs))
	seen := map[string]bool{}
	for _, q := range qs {
		seen[q.Name] = true
		s, ok := h.queues[q.Name]
		if !ok {
			s = &queueSample{ingress: q.PublishRate, history: []float64{q.PublishRate}}
			h.queues[q.Name] = s
		} else if base := s.base(at); at.Sub(base.at) >= minGap {
			growth := float64(q.Messages-base.depth) / at.Sub(base.at).Seconds()
			s.ingress = max(q.PublishRate, growth, 0)
			s.history = append(s.history, s.ingress)
			if len(s.history) > maxHistory {
				s.history = s.history[len(s.history)-maxHistory:]
			}
		}
		s.depths = append(s.depths, depthAt{q.Messages, at})
		out[q.Name] = views.Trend{Ingress: s.ingress, History: append([]float64(nil), s.history...)}
	}
	for name := range h.queues {
		if !seen[name] { // deleted: a queue of that name later starts afresh
			delete(h.queues, name)
		}
	}
	return out
}

// base is the oldest depth still inside the window ending at `at`; older
// ones are dropped.
func (s *queueSample) base(at time.Time) depthAt {
	for len(s.depths) > 1 && at.Sub(s.depths[0].at) > growthWindow {
		s.depths = s.depths[1:]
	}
	return s.depths[0]
}
