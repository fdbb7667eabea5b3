package journal

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

type recordingMirror struct {
	got  []Entry
	fail error
}

func (m *recordingMirror) Mirror(e Entry) error {
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
