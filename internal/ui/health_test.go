package ui

import (
	"testing"
	"time"
)

// TestIngressIsDepthGrowthBetweenPolls: with no publish rate (dead letters
// do not count there on 3.10), the ingress is the depth gained per second
// between polls, and the trend keeps one value per poll.
func TestIngressIsDepthGrowthBetweenPolls(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)
	fillOrders(h, 5, 15, 40) // +10 in 5 s, then +25 in 5 s
	tr := h.m.health.queues["orders.dlq"]
	if tr == nil {
		t.Fatal("no history for orders.dlq")
	}
	if tr.ingress != 5 {
		t.Errorf("ingress %v msg/s, want 25 messages / 5 s = 5", tr.ingress)
	}
	if n := len(tr.history); n != 3 { // the first read, then the two polls 5 s apart
		t.Errorf("history has %d values, want 3: %v", n, tr.history)
	}
	h.mustShow("CRIT  orders.dlq", "5.0")
}

// TestPollOnlyReadsWhileTheQueuesScreenShows: a poll on another screen
// reads nothing, but keeps the timer going.
func TestPollOnlyReadsWhileTheQueuesScreenShows(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)
	h.m.opts.PollEvery = time.Hour // armed, never run: the harness would wait for it
	h.openQueue("orders.dlq")
	before := h.m.listReq
	cmd := h.m.onPoll()
	if h.m.listReq != before {
		t.Fatal("a poll on the groups screen read the topology")
	}
	if cmd == nil {
		t.Fatal("the poll timer stopped")
	}
	h.press("back")
	h.m.onPoll()
	if h.m.listReq == 0 {
		t.Fatal("a poll on the queues screen did not read the topology")
	}
}
