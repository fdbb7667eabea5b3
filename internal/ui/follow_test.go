package ui

import (
	"testing"
	"time"
)

// TestCursorFollowsTheQueueAcrossAResort: the rows re-sort on every poll
// (inflow first); the cursor stays on the queue the responder put it on,
// and enter opens that queue, not the one now at its old row.
func TestCursorFollowsTheQueueAcrossAResort(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 120, 40)
	h.press("down")
	h.press("down")
	picked, ok := h.m.queues.Selected()
	if !ok {
		t.Fatal("nothing selected")
	}
	row, _ := h.m.queues.Table().Selected()
	// the picked queue starts receiving fastest: it moves to the top
	for qi := range h.reader.top.Queues {
		if h.reader.top.Queues[qi].Name == picked.Name {
			h.reader.top.Queues[qi].PublishRate = 50
		}
	}
	h.m.c.Now = func() time.Time { return fixedNow.Add(5 * time.Second) }
	h.send(pollMsg{})
	if now, _ := h.m.queues.Table().Selected(); now == row {
		t.Fatalf("%s stayed at row %d: the poll did not re-sort the list", picked.Name, row)
	}
	if q, _ := h.m.queues.Selected(); q.Name != picked.Name {
		t.Fatalf("after the re-sort the cursor is on %s, want %s", q.Name, picked.Name)
	}
	h.press("open")
	if got := h.m.groups.Queue(); got != picked.Name {
		t.Fatalf("enter opened %q, want the highlighted %q", got, picked.Name)
	}
}
