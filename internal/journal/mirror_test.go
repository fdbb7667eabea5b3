package journal

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

type recordingMirror struct {
	got  []Entry
	fail error
	seen func(Entry) // every entry handed over, confirmed or not
}

func (m *recordingMirror) Mirror(e Entry) error {
	if m.seen != nil {
		m.seen(e)
	}
	if m.fail != nil {
		return m.fail
	}
	m.got = append(m.got, e)
	return nil
}

// An entry the mirror (the audit stream) did not confirm is not written;
// one it confirmed is written as the mirror saw it, hash and all.
func TestAnEntryTheMirrorRefusesIsNotWritten(t *testing.T) {
	s, err := OpenShared(filepath.Join(t.TempDir(), "j.db"), time.Second, Stamp{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := &recordingMirror{}
	s.SetMirror(m)
	first, err := s.Append(Entry{Action: triage.ActionTag, Queue: "q", Reason: "one"})
	if err != nil {
		t.Fatal(err)
	}
	m.fail = errors.New("stream offline")
	if _, err := s.Append(Entry{Action: triage.ActionTag, Queue: "q", Reason: "two"}); err == nil || !errors.Is(err, m.fail) {
		t.Fatalf("append with the mirror refusing: %v, want its error", err)
	}
	m.fail = nil
	third, err := s.Append(Entry{Action: triage.ActionTag, Queue: "q", Reason: "three"})
	if err != nil {
		t.Fatal(err)
	}
	es, err := s.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Hash != first.Hash || es[1].Seq != 2 || es[1].Hash != third.Hash || es[1].PrevHash != first.Hash {
		t.Fatalf("journal = %+v, want entries one and three, chained", es)
	}
	if len(m.got) != 2 || m.got[0].Hash != es[0].Hash || m.got[1].Hash != es[1].Hash || !CheckHash(m.got[1]) {
		t.Fatalf("mirror saw %+v, want the two entries as written", m.got)
	}
	if err := VerifyChain(es); err != nil {
		t.Fatal(err)
	}
}

// An attempt the mirror may hold without having confirmed it (its confirm
// lost with a stream's leader) is named by the entry that takes its
// sequence number, even when that entry is written by the next process;
// an attempt that was never sent is not.
func TestTheEntryAfterAnUnconfirmedAttemptNamesIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	s, err := OpenShared(path, time.Second, Stamp{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	m := &recordingMirror{}
	s.SetMirror(m)
	if _, err := s.Append(Entry{Action: triage.ActionTag, Queue: "q", Reason: "one"}); err != nil {
		t.Fatal(err)
	}
	// Two attempts at entry 2 whose confirms were lost, one never sent.
	var lost []string
	for _, fail := range []error{errors.New("no confirm in 15s"), errors.New("channel closed"), fmt.Errorf("dial: %w", ErrNotSent)} {
		m.fail = fail
		var seen Entry
		m.seen = func(e Entry) { seen = e }
		if _, err := s.Append(Entry{Action: triage.ActionTag, Queue: "q", Reason: "two " + fail.Error()}); !errors.Is(err, fail) {
			t.Fatalf("append with the mirror failing: %v, want %v", err, fail)
		}
		if seen.Seq != 2 {
			t.Fatalf("the mirror saw entry %d, want 2", seen.Seq)
		}
		if !errors.Is(fail, ErrNotSent) {
			lost = append(lost, seen.Hash)
		}
	}
	s.Close()

	s, err = OpenShared(path, time.Second, Stamp{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m = &recordingMirror{}
	s.SetMirror(m)
	two, err := s.Append(Entry{Action: triage.ActionTag, Queue: "q", Reason: "two"})
	if err != nil {
		t.Fatal(err)
	}
	three, err := s.Append(Entry{Action: triage.ActionTag, Queue: "q", Reason: "three"})
	if err != nil {
		t.Fatal(err)
	}
	if two.Seq != 2 || !slices.Equal(two.Supersedes, lost) {
		t.Fatalf("entry %d supersedes %v, want 2 superseding the unconfirmed attempts %v", two.Seq, two.Supersedes, lost)
	}
	if len(three.Supersedes) != 0 {
		t.Fatalf("entry 3 supersedes %v, want nothing", three.Supersedes)
	}
	es, err := s.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyChain(es); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(es[1].Supersedes, lost) || !CheckHash(es[1]) {
		t.Fatalf("stored entry 2 = %+v, want it to name %v under its hash", es[1], lost)
	}
}

// While the mirror cannot take entries, a session's start or end is
// written all the same (a responder may still read), a decision is not;
// once the mirror is back, the entries it missed go to it first, in order.
func TestASessionEntryWaitsForTheMirrorAndGoesFirstWhenItIsBack(t *testing.T) {
	s, err := OpenShared(filepath.Join(t.TempDir(), "j.db"), time.Second, Stamp{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := &recordingMirror{fail: fmt.Errorf("dial: %w", ErrNotSent)}
	s.SetMirror(m)
	start := Entry{Action: triage.ActionSessionStart, Actor: "bob", Reason: "connected"}
	if _, err := s.Append(start); err != nil {
		t.Fatalf("a session's start with the mirror offline: %v", err)
	}
	if _, err := s.Append(Entry{Action: triage.ActionDiscard, Queue: "q", Reason: "dup"}); !errors.Is(err, m.fail) {
		t.Fatalf("a discard with the mirror offline: %v, want refused", err)
	}
	if _, err := s.Append(Entry{Action: triage.ActionSessionEnd, Actor: "bob", Reason: "disconnected"}); err != nil {
		t.Fatal(err)
	}
	held, err := s.Unmirrored()
	if err != nil || held != 1 {
		t.Fatalf("unmirrored from %d (%v), want 1", held, err)
	}

	// Back, but the first of the missed entries is refused: the discard
	// waits with them.
	m.fail = nil
	refuse := errors.New("no confirm")
	m.seen = func(e Entry) {
		if e.Seq == 1 {
			m.fail = refuse
		}
	}
	if _, err := s.Append(Entry{Action: triage.ActionDiscard, Queue: "q", Reason: "dup"}); !errors.Is(err, refuse) || !strings.Contains(err.Error(), "entry 1, written while the trail was offline, is still not on it") {
		t.Fatalf("a discard while the missed entries are refused: %v", err)
	}

	m.fail, m.seen = nil, nil
	d, err := s.Append(Entry{Action: triage.ActionDiscard, Queue: "q", Reason: "dup"})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for _, e := range m.got {
		seqs = append(seqs, e.Seq)
	}
	if d.Seq != 3 || !slices.Equal(seqs, []uint64{1, 2, 3}) {
		t.Fatalf("the mirror took entries %v, the discard is %d; want 1, 2, 3 in order", seqs, d.Seq)
	}
	if held, err := s.Unmirrored(); err != nil || held != 0 {
		t.Fatalf("unmirrored from %d (%v) after the catch-up, want 0", held, err)
	}
	es, err := s.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyChain(es); err != nil || len(es) != 3 {
		t.Fatalf("%d entries, %v", len(es), err)
	}
}
