package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// BenchmarkSharedAppend is one append through a Shared journal that already
// holds 10,000 entries: a replay journals every message this way, so the
// cost must not grow with the journal.
func BenchmarkSharedAppend(b *testing.B) {
	path := filepath.Join(b.TempDir(), "j.db")
	j, err := Open(path, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10000 {
		if _, err := j.Append(Entry{Actor: "ana", Action: triage.ActionTag, Vhost: "/", Queue: "q", MessageIDs: []string{fmt.Sprint("m-", i)}, Reason: "needs-fix"}); err != nil {
			b.Fatal(err)
		}
	}
	j.Close()
	s, err := OpenShared(path, time.Second, Stamp{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Append(Entry{Actor: "ana", Action: triage.ActionTag, Vhost: "/", Queue: "q", MessageIDs: []string{fmt.Sprint("n-", i)}, Reason: "needs-fix"}); err != nil {
			b.Fatal(err)
		}
	}
}

// A Shared checks only what follows the entry it last saw, so it must still
// refuse a file replaced between two of its appends: another journal of
// more entries put in its place breaks the entry it trusted.
func TestSharedRefusesAJournalReplacedBetweenAppends(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "j.db")
	s, err := OpenShared(path, time.Second, Stamp{})
	if err != nil {
		t.Fatal(err)
	}
	tag := func(id string) Entry {
		return Entry{Actor: "ana", Action: triage.ActionTag, Vhost: "/", Queue: "q", MessageIDs: []string{id}, Reason: "needs-fix"}
	}
	for _, id := range []string{"m-1", "m-2"} {
		if _, err := s.Append(tag(id)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * holdFor) // the Shared has let go of the file
	other := filepath.Join(dir, "other.db")
	o, err := Open(other, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"x-1", "x-2", "x-3"} {
		if _, err := o.Append(tag(id)); err != nil {
			t.Fatal(err)
		}
	}
	o.Close()
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(headPath(other), headPath(path)); err != nil {
		t.Fatal(err)
	}
	_, err = s.Append(tag("m-3"))
	var de *DamagedError
	if !errors.As(err, &de) {
		t.Fatalf("append to a replaced journal: %v, want a DamagedError", err)
	}
}
