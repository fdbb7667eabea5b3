package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// While alice's replay observes its canary in the TUI, another session
// is told what her replay holds and may not act on the queue; SIGTERM then
// ends the replay safely (journaled, every unpublished message back in the
// parking queue) before the server exits, and resumable: --resume ends it.
func TestServeSIGTERMEndsARunningReplaySafely(t *testing.T) {
	bed := newReplayBed(t, "serve-term")
	bed.park(6)
	stop := bed.consume(bedOrders)
	defer stop()
	b := startServe(t, bed.env)
	s := b.tui("alice", 110, 32)
	s.waitFor(bedParking, "actor alice")
	openBedParking(s)
	s.waitFor("all 6 messages", "rejected")
	s.keys("R")
	s.waitFor("Replay dry run", "6 messages")
	s.keys("c")
	s.waitFor("canary size:")
	s.keys("C-u")
	s.typeText("2")
	s.keys("Enter")
	s.waitFor("2 at 1.0 msg/s")
	s.keys("Enter")
	s.waitFor("Start the replay?")
	s.keys("y")
	s.waitFor("OBSERVING", "2 of 6 published")

	// the management API's statistics are a few seconds old: bob is told
	// once they show what alice's replay holds
	var r result
	for range 20 {
		r = b.ssh("bob", "groups", bedParking)
		if r.code != 0 || strings.Contains(r.stderr, "4 of 4 messages are held by another reader") {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if r.code != 0 || !strings.Contains(r.stderr, "4 of 4 messages are held by another reader") {
		t.Errorf("bob's read beside the replay: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = b.ssh("carol", "replay", bedParking, "--group", "rejected", "--yes")
	if r.code == 0 || !strings.Contains(r.stderr, "alice is replaying "+bedParking+" since ") {
		t.Errorf("carol's replay beside alice's: exit %d\n%s", r.code, r.stderr)
	}

	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- b.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("dlqt serve exited with %v after SIGTERM", err)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("dlqt serve still runs 25 s after SIGTERM")
	}
	bed.waitDepth(bedParking, 4) // the canary's 2 went out, the rest is back
	var replayID string
	var finished, ended bool
	var seen strings.Builder
	for _, e := range journalEntries(t, bed.journal) {
		fmt.Fprintf(&seen, "  %s %s %q %v\n", e.Actor, e.Action, e.Reason, e.Details)
		if e.Actor != "alice" {
			continue // carol's refused replay is hers
		}
		if e.Action == triage.ActionReplayStop && e.Details["resumable"] == true {
			replayID, _ = e.Details["replay_id"].(string)
		}
		finished = finished || e.Action == triage.ActionReplayFinish || e.Action == triage.ActionReplayAbort
		ended = ended || e.Action == triage.ActionSessionEnd
	}
	if replayID == "" || finished || !ended {
		t.Fatalf("journal: resumable stop of alice's replay %q, her abort or finish %v, her session_end %v; entries:\n%s", replayID, finished, ended, seen.String())
	}
	b.waitLog("shutting down: ")

	// The README promises such a replay resumable: --resume finishes it.
	r = runDlqt(t, bed.env, "replay", "--resume", replayID)
	if r.code != 0 || !strings.Contains(r.stdout, "resolved 6, failed again 0, returned 0, untouched 0") {
		t.Fatalf("--resume %s: exit %d\n%s%s", replayID, r.code, r.stdout, r.stderr)
	}
	bed.waitDepth(bedParking, 0)
}
