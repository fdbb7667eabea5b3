package ui

import (
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// Enter on a group while the first read still goes on used to do nothing
// (the groups grow on screen, but nothing can be opened until the read
// ends): the key was dropped, and a tired user pressed it again or gave up.
// Now the group opens when the read ends.
func TestEnterDuringTheReadOpensTheGroupWhenTheReadEnds(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)
	h.m.queues.SelectName("orders.dlq")
	_, browse := h.m.Update(keyPress("enter")) // the browse stays in flight
	b := h.m.flow.browse
	if b == nil {
		t.Fatal("no browse in flight")
	}

	// the read so far: one group, shown live
	h.m.Update(partialRead(t, b.id, "orders.dlq")) // its next progress is not awaited: the read is held
	if h.m.groups.Inspection() != nil {
		t.Fatal("a live read can be opened: the test is not testing the early key")
	}
	g, ok := h.m.groups.Selected()
	if !ok {
		t.Fatalf("no group under the cursor during the read:\n%s", h.screen())
	}
	h.press("open")
	if h.m.c.focus != screenGroups {
		t.Fatalf("focus %v during the read, want the groups screen", h.m.c.focus)
	}
	h.mustShow("still reading: the group opens when the read ends")

	h.run(browse) // the read ends
	if h.m.c.focus != screenMessages {
		t.Fatalf("focus %v after the read, want the group's messages:\n%s", h.m.c.focus, h.screen())
	}
	if got := h.m.messages.Group(); got.Reason != g.Reason || got.ReasonCode != g.ReasonCode {
		t.Fatalf("opened %s/%s, want %s/%s", got.Reason, got.ReasonCode, g.Reason, g.ReasonCode)
	}
}

// An action key during the first read said "nothing is read yet" on the
// error line, which the read's end cleared a moment later: the key seemed
// lost (an end-to-end test waited 19 s for a dry run). It now says the
// action waits for the read, and the line stays until the next key.
func TestAnActionKeyDuringTheReadSaysToWaitForIt(t *testing.T) {
	h, _ := liveHarness(t, 120, 40)
	h.m.queues.SelectName("orders.dlq")
	_, browse := h.m.Update(keyPress("enter"))
	b := h.m.flow.browse
	h.m.Update(partialRead(t, b.id, "orders.dlq"))
	h.press("replay")
	h.mustShow("still reading: replay works once the read ends")
	h.mustNotShow("nothing is read yet")
	h.run(browse) // the read ends
	h.mustShow("still reading: replay works once the read ends")
	if h.m.c.focus != screenGroups {
		t.Fatalf("focus %v, want the groups screen", h.m.c.focus)
	}
}

// Leaving the queue during the read forgets the early enter.
func TestAnEarlyEnterIsForgottenWhenTheUserLeaves(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)
	h.m.queues.SelectName("orders.dlq")
	_, browse := h.m.Update(keyPress("enter"))
	b := h.m.flow.browse
	h.m.Update(partialRead(t, b.id, "orders.dlq")) // its next progress is not awaited: the read is held
	h.press("open")
	h.press("back")
	h.run(browse)   // a stale reply now
	h.press("open") // opens the queue again and reads it whole (synchronously)
	if h.m.c.focus != screenGroups {
		t.Fatalf("focus %v, want the groups screen: the early enter outlived the read it was for", h.m.c.focus)
	}
}

// partialRead is the progress of a read of queue that has seen one
// message of its largest group so far, as the browse reports it live.
func partialRead(t *testing.T, id int, queue string) browseProgressMsg {
	t.Helper()
	whole := newHarness(t, Options{}, 120, 40)
	whole.openQueue(queue)
	insp := whole.m.groups.Inspection()
	if insp == nil || len(insp.Groups) == 0 {
		t.Fatalf("%s reads no group", queue)
	}
	g := insp.Groups[0]
	g.Count, g.Members = 1, nil
	partial := triage.Inspection{Batch: triage.Batch{Queue: queue, Read: 1}, Groups: []triage.Group{g}}
	return browseProgressMsg{id: id, read: 1, expected: insp.Len(), live: &partial}
}
