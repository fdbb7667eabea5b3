package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dlqt/dlqt/internal/triage"
)

// A journal written by a build before entries carried a version and a
// context (testdata/before-version.jsonl, made by that build: Go-style keys
// and nanosecond durations in the plan) still verifies, stored and
// exported, with new stamped entries appended after it.
func TestEntriesWrittenBeforeTheStampStillVerifyBesideNewOnes(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "before-version.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old, err := ReadJSONL(f)
	if err != nil || len(old) != 2 {
		t.Fatalf("reading the old export: %d entries, %v", len(old), err)
	}
	if err := VerifySegment(old); err != nil {
		t.Fatalf("the old export no longer verifies: %v", err)
	}

	// The old entries as a journal file holds them: the stored bytes.
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = j.db.Update(func(tx *bolt.Tx) error {
		raw, _ := os.ReadFile(filepath.Join("testdata", "before-version.jsonl"))
		for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			if err := tx.Bucket(bucketEntries).Put(seqKey(uint64(i+1)), []byte(line)); err != nil {
				return err
			}
		}
		return nil
	})
	j.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err := OpenShared(path, time.Second, Stamp{Version: "v1.2.3 (abc123)", Context: "prod-eu"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Append(Entry{Actor: "ana", Action: triage.ActionTag, Queue: "q", MessageIDs: []string{"m"}, Reason: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Seq != 3 || e.PrevHash != old[1].Hash || e.Version != "v1.2.3 (abc123)" || e.Context != "prod-eu" {
		t.Fatalf("new entry = %+v; want seq 3 after the old ones, stamped", e)
	}
	es, err := s.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyChain(es); err != nil {
		t.Fatalf("old and new entries together: %v", err)
	}
	var buf bytes.Buffer
	if _, err := s.Export(&buf, FormatJSONL, time.Time{}); err != nil {
		t.Fatal(err)
	}
	exported := buf.String()
	back, err := ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifySegment(back); err != nil {
		t.Fatalf("export of old and new entries: %v", err)
	}
	if !strings.Contains(exported, `"version":"v1.2.3 (abc123)","context":"prod-eu"`) {
		t.Errorf("the export does not carry the stamp:\n%s", exported)
	}
}

// A Shared journal holds its lock for at most holdFor after it writes:
// another process (here a second open, which bbolt refuses while a lock is
// held) opens it for writing and for reading while the Shared is in use.
func TestSharedHoldsTheLockOnlyWhileItWorks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	s, err := OpenShared(path, time.Second, Stamp{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(Entry{Actor: "ana", Action: "note"}); err != nil {
		t.Fatal(err)
	}
	other, err := Open(path, holdFor+time.Second)
	if err != nil {
		t.Fatalf("a second writer could not open the journal beside a Shared: %v", err)
	}
	if _, err := other.Append(Entry{Actor: "bo", Action: "note"}); err != nil {
		t.Fatal(err)
	}
	other.Close()
	e, err := s.Append(Entry{Actor: "ana", Action: "note"})
	if err != nil || e.Seq != 3 {
		t.Fatalf("append after the other writer: seq %d, %v; want 3", e.Seq, err)
	}
	es, err := s.Entries()
	if err != nil || len(es) != 3 || VerifyChain(es) != nil {
		t.Fatalf("entries: %d, %v", len(es), err)
	}
}
