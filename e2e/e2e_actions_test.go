package e2e

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// End-to-end actions from the keyboard: the built binary in tmux, the real
// broker in a vhost of the test's own (replayBed: orders.parking holds
// orders rejected out of queue "orders", their original route).

func TestTUIDiscardsTheMarkedMessagesWithAReason(t *testing.T) {
	b := newReplayBed(t, "tui-discard")
	ids := b.park(5)
	s := startTerm(t, 100, 30, b.env, "--actor", "ana@bastion", "--queue", bedParking)

	s.waitFor("all 5 messages", "rejected")
	s.keys("Enter")
	s.waitFor(ids[0], ids[4])
	s.keys("Space", "Space") // marks the first two; the cursor moves on
	s.waitFor("2 marked", "* "+ids[0], "* "+ids[1])

	s.keys("x")
	s.waitFor("Discard 2 messages from " + bedParking)
	s.keys("Enter") // no reason yet
	s.waitFor("refused: a reason is required")
	s.typeText("duplicates of INC-42 q") // q is text here
	s.keys("Enter")
	s.waitFor("Discard for good?", "2 messages (2 marked messages)", "reason    duplicates of INC-42 q")
	s.keys("y")
	s.waitFor("done: discarded 2 from "+bedParking, "all 3 messages")

	// the journal screen: newest first, the chain checked
	s.keys("J")
	s.waitFor("chain verified", "discard", "duplicates of INC")
	s.keys("Enter")
	s.waitFor("entry ", "step", `"outcome"`, ids[0], ids[1], "prev hash")
	s.keys("Escape")
	s.waitFor("seq time (UTC)")
	s.keys("Escape")
	s.waitFor("reason_code")

	s.keys("q")
	deadline := time.Now().Add(10 * time.Second)
	for !s.exited() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if !s.exited() {
		t.Fatal("dlqt did not quit")
	}

	b.waitDepth(bedParking, 3)
	if got, want := messageIDs(b.read(bedParking)), ids[2:]; !slices.Equal(got, want) {
		t.Fatalf("parking queue holds %v, want %v", got, want)
	}
	j := b.verifyJournal()
	es, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var decision, outcome bool
	for _, e := range es {
		if e.Action != triage.ActionDiscard || e.Actor != "ana@bastion" || e.Reason != "duplicates of INC-42 q" {
			continue
		}
		if !slices.Equal(e.MessageIDs, ids[:2]) {
			t.Errorf("discard entry names %v, want %v", e.MessageIDs, ids[:2])
		}
		switch e.Details["step"] {
		case "decision":
			decision = true
		case "outcome":
			outcome = true
		}
	}
	if !decision || !outcome {
		t.Fatalf("journal lacks the discard decision (%v) or outcome (%v): %+v", decision, outcome, es)
	}
}

var publishedRe = regexp.MustCompile(`(\d+) of (\d+) published`)

func TestTUIRunsACanaryReplayAndShowsTheGauge(t *testing.T) {
	b := newReplayBed(t, "tui-replay")
	ids := b.park(6)
	slices.Sort(ids)
	s := startTerm(t, 100, 30, b.env, "--actor", "ana@bastion", "--queue", bedParking)
	s.waitFor("all 6 messages", "rejected")

	// the whole group, to its original route
	s.keys("R")
	s.waitFor("Replay dry run", "6 messages", "orders:order.created", "original route (allowed)", "sample (redacted)")
	s.keys("c")
	s.waitFor("canary size:")
	s.keys("C-u") // clear the current value
	s.typeText("2")
	s.keys("Enter")
	s.keys("o")
	s.waitFor("observe for:")
	s.keys("C-u")
	s.typeText("4s")
	s.keys("Enter")
	s.waitFor("2 at 1.0 msg/s, then observe 4s")

	s.keys("Enter")
	s.waitFor("Start the replay?", "6 messages from "+bedParking)
	s.keys("y")

	// the canary: numbers move, then the observation counts down
	s.waitFor("CANARY")
	first := published(t, s.waitFor("of 6 published"))
	scr := s.waitFor("OBSERVING", "2 of 6 published")
	if first > 2 {
		t.Errorf("the canary published %d before observing", first)
	}
	if !regexp.MustCompile(`OBSERVING — \d+s left`).MatchString(scr) {
		t.Errorf("no countdown while observing:\n%s", scr)
	}
	scr = s.waitFor("WAITING FOR YOUR DECISION", "+ ramps up")
	t.Logf("the gauge after the canary:\n%s", scr)
	if n := b.depth(bedOrders); n != 2 {
		t.Errorf("the destination holds %d messages during the wait, want the 2 of the canary", n)
	}

	s.typeText("+")
	scr = s.waitFor("FINISHED", "resolved     6", "failed again 0", "untouched    0", "Duplicates are possible")
	if published(t, scr) != 6 {
		t.Errorf("gauge at the end:\n%s", scr)
	}
	t.Logf("the gauge at the end:\n%s", scr)

	b.waitDepth(bedParking, 0)
	b.waitDepth(bedOrders, 6)
	if got := messageIDs(b.read(bedOrders)); !slices.Equal(got, ids) {
		t.Fatalf("destination holds %v, want %v", got, ids)
	}

	// esc goes back and reads the queue again: empty now
	s.keys("Escape")
	s.waitFor("The queue is empty")
	s.keys("q")
	deadline := time.Now().Add(10 * time.Second)
	for !s.exited() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	j := b.verifyJournal()
	if open, err := replay.Interrupted(j); err != nil || len(open) != 0 {
		t.Errorf("interrupted replays after a finished one: %v, %v", open, err)
	}
}

func published(t *testing.T, screen string) int {
	t.Helper()
	m := publishedRe.FindStringSubmatch(screen)
	if m == nil {
		t.Fatalf("no published count on screen:\n%s", screen)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestTUIActionsOnTheDemoSayTheyNeedALiveBroker(t *testing.T) {
	s := startTerm(t, 100, 30, isolatedEnv(t), "--demo")
	s.waitFor("DEMO data")
	s.keys("Enter")
	s.waitFor("reason_code")
	s.keys("x")
	s.waitFor("discard needs a live broker: this is a snapshot, read-only")
	s.keys("R")
	s.waitFor("replay needs a live broker: this is a snapshot, read-only")
}

// A replay killed midway shows as a banner when dlqt starts; U resumes it
// in the TUI and nothing is lost.
func TestTUIBannerResumesAKilledReplay(t *testing.T) {
	b := newReplayBed(t, "tui-resume")
	ids := b.park(40)
	replayID := b.replayKilledAt(8, "--group", "rejected", "--rate", "10", "--canary", "2", "--observe", "200ms")
	time.Sleep(500 * time.Millisecond) // the broker requeues what the killed dlqt held

	s := startTerm(t, 120, 30, b.env, "--actor", "ana@bastion")
	s.waitFor("INTERRUPTED REPLAY "+replayID, "U resumes it here", "dlqt replay --resume "+replayID)
	s.keys("U")
	s.waitFor("Resume interrupted replay", "confirmed (acked, not sent again)")
	s.keys("Enter")
	s.waitFor("Start the replay?")
	s.keys("y")
	deadline := time.Now().Add(60 * time.Second)
	ramps := 0
	for {
		scr := s.screen()
		if strings.Contains(scr, "FINISHED") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resumed replay never finished:\n%s", scr)
		}
		if ramps < 4 && (strings.Contains(scr, "WAITING FOR YOUR DECISION") || strings.Contains(scr, "RUNNING")) {
			s.typeText("+") // up to the ceiling
			ramps++
		}
		time.Sleep(300 * time.Millisecond)
	}
	scr := s.waitFor("This replay was resumed")
	if strings.Contains(scr, "INTERRUPTED REPLAY") {
		t.Errorf("the banner outlived the resume:\n%s", scr)
	}
	s.keys("q")

	b.waitDepth(bedParking, 0)
	assertNoneLost(t, ids, b.read(bedOrders), nil)
	j := b.verifyJournal()
	if open, err := replay.Interrupted(j); err != nil || len(open) != 0 {
		t.Errorf("still interrupted after the resume in the TUI: %+v, %v", open, err)
	}
}
