package ui

import (
	"testing"
	"time"
)

// TestIngressIsDepthGrowthBetweenPolls: with no publish rate (dead letters
// do not count there on 3.10), the ingress is the depth gained per second
// over the polls of the last 30 s, and the trend keeps one value per poll
// that measured one.
func TestIngressIsDepthGrowthBetweenPolls(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)
	fillOrders(h, 5, 15, 40) // at 0 s (as read at start), 5 s, 10 s
	tr := h.m.queues.health.queues["orders.dlq"]
	if tr == nil {
		t.Fatal("no history for orders.dlq")
	}
	if tr.ingress != 3.5 {
		t.Errorf("ingress %v msg/s, want (40-5) messages / 10 s = 3.5", tr.ingress)
	}
	if n := len(tr.history); n != 3 { // the first read, then the polls at 5 s and 10 s
		t.Errorf("history has %d values, want 3: %v", n, tr.history)
	}
	h.mustShow("CRIT  orders.dlq", " 3.5 ")

	// polls at 40 s and 45 s: the 10 s poll fell out of the 30 s window,
	// so the growth is the 30 messages since the 40 s poll, in 5 s
	fillOrdersFrom(h, 40*time.Second, 100, 130)
	if tr.ingress != 6 {
		t.Errorf("ingress %v msg/s after the window moved, want 30 / 5 s = 6", tr.ingress)
	}
}

// TestPollOnlyReadsWhileTheQueuesScreenShows: a poll on another screen
// reads nothing, but keeps the timer going.
func TestPollOnlyReadsWhileTheQueuesScreenShows(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)
	h.m.c.opts.PollEvery = time.Hour // armed, never run: the harness would wait for it
	h.openQueue("orders.dlq")
	before := h.m.queues.listReq
	cmd := h.m.queues.onPoll()
	if h.m.queues.listReq != before {
		t.Fatal("a poll on the groups screen read the topology")
	}
	if cmd == nil {
		t.Fatal("the poll timer stopped")
	}
	h.press("back")
	h.m.queues.onPoll()
	if h.m.queues.listReq == 0 {
		t.Fatal("a poll on the queues screen did not read the topology")
	}
}

// TestHealthFromTheFirstFrameWithoutABrowse: before any browse and before
// a second poll, the broker's depth rate and depth history say that a
// queue is filling and how long its messages have waited: a queue still
// receiving 0.5 dead letters a second, or whose messages have waited 13
// minutes, does not read ok, and the filling one comes first. At 50
// columns in/s and trend still show.
func TestHealthFromTheFirstFrameWithoutABrowse(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	r := scenario()
	for i, q := range r.top.Queues {
		switch q.Name {
		case "payments.parking":
			r.top.Queues[i].DepthRate = 0.5 // dead letters: no publish rate on 3.10
		case hostileQueue:
			r.top.Queues[i].HeldSince = fixedNow.Add(-13 * time.Minute)
		}
	}
	for _, w := range []int{120, 50} {
		if w == 50 { // names as long as payments.parking: the escaped hostile one is 24 cells
			r.top.Queues[len(r.top.Queues)-1].Name = "evil.dlq"
		}
		h := newHarness(t, Options{Reader: r}, w, 24)
		if st := h.m.queues.Health("payments.parking"); st != "WARN" {
			t.Errorf("%d columns: payments.parking receiving 0.5/s reads %q, want WARN", w, st)
		}
		if st := h.m.queues.Health(r.top.Queues[len(r.top.Queues)-1].Name); st != "WARN" {
			t.Errorf("%d columns: a queue whose messages waited 13 minutes reads %q, want WARN", w, st)
		}
		if q, _ := h.m.queues.Selected(); q.Name != "payments.parking" {
			t.Errorf("%d columns: %s is first, want the filling payments.parking", w, q.Name)
		}
		h.mustShow("in/s", "trend", " 0.5 ")
		if w == 120 {
			h.mustShow("≥13m")
			h.mustNotShow("unread    0 (")
		}
	}
}

// TestAnUnreadQueueSaysAReadCostsADeliveryBeforeItsAgeBound: a quorum
// queue with a delivery limit, not read yet, whose depth history bounds
// its oldest message: the oldest column shows the bound, and the status
// line still says that a read counts a delivery (the e2e walk saw the
// bound take its place, and at 80 columns the line holds one of them).
func TestAnUnreadQueueSaysAReadCostsADeliveryBeforeItsAgeBound(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	r := scenario()
	for i, q := range r.top.Queues {
		if q.Name == "payments.parking" {
			r.top.Queues[i].DepthRate = 0.5 // first in the list, so selected
			r.top.Queues[i].HeldSince = fixedNow.Add(-13 * time.Minute)
		}
	}
	h := newHarness(t, Options{Reader: r}, 80, 24)
	if q, _ := h.m.queues.Selected(); q.Name != "payments.parking" {
		t.Fatalf("%s is selected, want payments.parking", q.Name)
	}
	h.mustShow("\npayments.parking: unread: each read counts a delivery here; enter asks first", "≥13m")
}

// TestAQueueFillingBeforeAnyArrivalWasSeenSaysItsRate: on the first frame
// the in/s column shows the broker's rate; the status line must not say
// "no arrival seen yet" beside it.
func TestAQueueFillingBeforeAnyArrivalWasSeenSaysItsRate(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	r := scenario()
	for i, q := range r.top.Queues {
		if q.Name == "payments.parking" {
			r.top.Queues[i].DepthRate = 0.5 // first in the list, so selected
		}
	}
	h := newHarness(t, Options{Reader: r}, 120, 24)
	h.mustShow("payments.parking: arriving at 0.5/s (the broker's rate)")
	h.mustNotShow("no arrival seen yet")
}
