package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

func TestServeRefusesAKeyNotInTheUsersFile(t *testing.T) {
	b := startServe(t, isolatedEnv(t), "--demo", "--journal", t.TempDir()+"/j.db")
	r := b.ssh("eve", "queues")
	if r.code != 255 || !strings.Contains(r.stderr, "Permission denied (publickey)") {
		t.Fatalf("eve's key: exit %d, stderr %q", r.code, r.stderr)
	}
	if r.stdout != "" {
		t.Fatalf("eve saw %q", r.stdout)
	}
	for _, l := range b.lines() {
		if strings.Contains(l, "session") {
			t.Fatalf("a session opened for eve: %s", l)
		}
	}
	if r := b.ssh("alice", "queues"); r.code != 0 || !strings.Contains(r.stdout, "billing.parking") {
		t.Fatalf("alice's key: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
}

// A viewer browses the real broker's queues and groups; every action key
// says it is not allowed, and nothing leaves the queue.
func TestServeViewerSeesQueuesAndGroupsAndNoActionKeyWorks(t *testing.T) {
	bed := newReplayBed(t, "serve-viewer")
	ids := bed.park(4)
	b := startServe(t, bed.env)
	s := b.tui("bob", 120, 32)
	s.waitFor(bedParking, "actor bob", "viewer")
	openBedParking(s)
	s.waitFor("all 4 messages", "rejected")
	for _, k := range []string{"x", "R", "U"} {
		s.keys(k)
		s.waitFor("not allowed: bob is a viewer")
		s.keys("Down") // clears the hint: the next key must say it again
		s.waitGone("not allowed: bob is a viewer")
	}
	s.keys("Enter")
	s.waitFor(ids[0])
	s.keys("Enter")
	s.waitFor("message " + ids[0])
	s.keys("v")
	s.waitFor("not allowed: bob is a viewer")
	s.keys("q")
	waitGoneOrExit(t, s)
	bed.waitDepth(bedParking, 4)
	for _, e := range journalEntries(t, bed.journal) {
		if e.Action == triage.ActionDiscard || e.Action == triage.ActionReveal || e.Action.IsReplay() {
			t.Errorf("a viewer's session journaled %s: %+v", e.Action, e)
		}
	}
}

// waitGoneOrExit waits for the ssh session to end after q.
func waitGoneOrExit(t *testing.T, s *term) {
	t.Helper()
	for range 100 {
		if s.exited() {
			return
		}
		s.keys("y") // a quit confirmation, if the screen asks one
		sleepShort()
	}
	t.Fatalf("the session did not end:\n%s", s.screen())
}

// An operator's reveal and discard over SSH are journaled with the user's
// name as actor and the key's fingerprint and the client's address.
func TestServeOperatorRevealAndDiscardAreJournaledWithActorAndFingerprint(t *testing.T) {
	bed := newReplayBed(t, "serve-operator")
	ids := bed.park(3)
	b := startServe(t, bed.env)
	s := b.tui("alice", 120, 32)
	s.waitFor(bedParking, "actor alice", "operator")
	openBedParking(s)
	s.waitFor("all 3 messages", "rejected")
	s.keys("Enter")
	s.waitFor(ids[0], ids[2])
	s.keys("Enter")
	s.waitFor("message " + ids[0])
	s.keys("v")
	s.waitFor("Reveal the unredacted payload?", "alice")
	s.keys("y")
	s.waitFor("REVEALED (journal #")
	s.keys("Escape")
	s.waitFor(ids[0], ids[2])
	s.keys("Space")
	s.waitFor("1 marked")
	s.keys("x")
	s.waitFor("Discard 1 message from " + bedParking)
	s.typeText("duplicate of INC-7")
	s.keys("Enter")
	s.waitFor("Discard for good?")
	s.keys("y")
	s.waitFor("done: discarded 1 from "+bedParking, "all 2 messages")
	s.keys("q")
	waitGoneOrExit(t, s)
	b.waitLog("alice left")
	alice := b.peers["alice"]
	var reveal, discard, start, end bool
	for _, e := range journalEntries(t, bed.journal) {
		if e.Actor != "alice" {
			t.Errorf("entry %d (%s) names actor %q", e.Seq, e.Action, e.Actor)
			continue
		}
		if e.Details["ssh_fingerprint"] != alice.fingerprint || !strings.HasPrefix(e.Details["client_addr"].(string), "127.0.0.1:") {
			t.Errorf("entry %d (%s) details %v, want fingerprint %s and the client address", e.Seq, e.Action, e.Details, alice.fingerprint)
		}
		switch e.Action {
		case triage.ActionReveal:
			reveal = slices.Equal(e.MessageIDs, ids[:1])
		case triage.ActionDiscard:
			discard = discard || (e.Details["step"] == "outcome" && slices.Equal(e.MessageIDs, ids[:1]))
		case triage.ActionSessionStart:
			start = true
		case triage.ActionSessionEnd:
			end = true
		}
	}
	if !reveal || !discard || !start || !end {
		t.Fatalf("journal: reveal %v, discard %v, session_start %v, session_end %v", reveal, discard, start, end)
	}
	bed.waitDepth(bedParking, 2)
}

// openBedParking moves the queues screen's cursor to the bed's parking
// queue and opens it.
func openBedParking(s *term) {
	s.t.Helper()
	for range 10 {
		if selected(s.screen(), bedParking) {
			break
		}
		s.keys("Down")
		sleepShort()
	}
	s.keys("Enter")
}

func selected(screen, name string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " │"), "›") && strings.Contains(l, name) {
			return true
		}
	}
	return false
}

func sleepShort() { time.Sleep(100 * time.Millisecond) }
