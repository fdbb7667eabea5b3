package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/views"
)

// The queues screen's rates and trends are measured here, across polls of
// the topology, and start from the management API's rates: on RabbitMQ
// 3.10.8 a dead-lettered message does not count in the parking queue's
// publish rate (checked: 30 dead letters, no message_stats at all), so the
// inflow of a parking queue shows as its depth growing: the API's depth
// rate (messages_details) at the first poll, the polls' growth after.

// defaultPoll matches the management API's default statistics interval:
// polling faster would read the same numbers twice.
const defaultPoll = 5 * time.Second

// maxHistory is how many polls a queue's trend keeps: 5 minutes at 5 s.
const maxHistory = 60

// pollMsg is the poll timer firing.
type pollMsg struct{}

func (pollMsg) owner() screenID { return screenQueues }

// relistMsg asks for the queue list at once, off the poll's beat: the
// user came back to it, and what it shows is as old as when they left.
type relistMsg struct{}

func (relistMsg) owner() screenID { return screenQueues }

func relist() tea.Msg { return relistMsg{} }

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
	depths      []depthAt // within growthWindow, oldest first
	window      []depthAt // within views.GrowthSpan, oldest first: the growth a responder reads
	ingress     float64
	history     []float64
	lastArrival time.Time // the poll that first saw the depth grow last
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
			// the broker's own rates from the first poll: waiting for two
			// polls showed every queue at 0 for the first 5 s
			s = &queueSample{ingress: q.Ingress(), history: []float64{q.Ingress()}}
			h.queues[q.Name] = s
		} else if base := s.base(at); at.Sub(base.at) >= minGap {
			growth := float64(q.Messages-base.depth) / at.Sub(base.at).Seconds()
			s.ingress = max(q.Ingress(), growth)
			s.history = append(s.history, s.ingress)
			if len(s.history) > maxHistory {
				s.history = s.history[len(s.history)-maxHistory:]
			}
		}
		s.depths = append(s.depths, depthAt{q.Messages, at})
		s.noteWindow(q.Messages, at)
		out[q.Name] = s.trend(at)
	}
	for name := range h.queues {
		if !seen[name] { // deleted: a queue of that name later starts afresh
			delete(h.queues, name)
		}
	}
	return out
}

// noteWindow keeps the depths of the last views.GrowthSpan and when the
// depth last grew: dead letters arrive in bursts, and an inflow measured
// over 30 s falls to 0 long before anyone has dealt with them.
func (s *queueSample) noteWindow(depth int, at time.Time) {
	if n := len(s.window); n > 0 && depth > s.window[n-1].depth {
		s.lastArrival = at
	}
	s.window = append(s.window, depthAt{depth, at})
	for len(s.window) > 1 && at.Sub(s.window[0].at) > views.GrowthSpan {
		s.window = s.window[1:]
	}
}

// trend is what the queues screen shows of the sample at `at`.
func (s *queueSample) trend(at time.Time) views.Trend {
	first, last := s.window[0], s.window[len(s.window)-1]
	return views.Trend{Ingress: s.ingress, History: append([]float64(nil), s.history...),
		LastArrival: s.lastArrival, Growth: last.depth - first.depth, GrowthOver: at.Sub(first.at),
		Baseline: min(first.depth, last.depth)}
}

// base is the oldest depth still inside the window ending at `at`; older
// ones are dropped.
func (s *queueSample) base(at time.Time) depthAt {
	for len(s.depths) > 1 && at.Sub(s.depths[0].at) > growthWindow {
		s.depths = s.depths[1:]
	}
	return s.depths[0]
}
