package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

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

// A page overwritten while a replay appends is found during the replay,
// not at the next full check: the Shared checks the file as it appends
// (see pageCheckShare) and refuses further appends once the check fails.
func TestAPageOverwrittenDuringAReplayStopsItsAppends(t *testing.T) {
	path := bigJournal(t, 300) // written in one transaction: each entry is on one page only
	s, err := OpenShared(path, time.Second, Stamp{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tag := func(i int) Entry {
		return Entry{Actor: "ana", Action: triage.ActionTag, Vhost: "/", Queue: "q", MessageIDs: []string{fmt.Sprint("r-", i)}, Reason: "replayed"}
	}
	if _, err := s.Append(tag(0)); err != nil {
		t.Fatal(err)
	}
	overwritePageOf(t, path, `{"seq":1,`)
	var de *DamagedError
	deadline := time.Now().Add(10 * time.Second)
	for i := 1; ; i++ {
		_, err := s.Append(tag(i))
		if errors.As(err, &de) {
			t.Logf("refused at append %d: %v", i, err)
			break
		}
		if err != nil {
			t.Fatalf("append %d: %v, want a DamagedError", i, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d appends went on into a journal with an overwritten page", i)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := s.Append(tag(-1)); !errors.As(err, &de) {
		t.Errorf("an append after the refusal: %v, want the same DamagedError", err)
	}
}

// pageHolding is the file at path and the offset of the 4 KiB page that
// holds needle.
func pageHolding(t *testing.T, path, needle string) ([]byte, int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(data, []byte(needle))
	if at < 0 {
		t.Fatalf("%q is not in %s", needle, path)
	}
	return data, at / 4096 * 4096
}

// overwritePageOf overwrites the header of the page that holds needle, as
// a stray write into the file would, behind the back of whoever has it open.
func overwritePageOf(t *testing.T, path, needle string) {
	t.Helper()
	_, at := pageHolding(t, path, needle)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte{0xff, 0xff}, int64(at)+8); err != nil { // its flags: no page type
		t.Fatal(err)
	}
}

// The entries after the one a Shared trusts are checked in their stored
// bytes (not decoded, unless they are not as seal writes them): one that
// another writer appended and someone then changed in the file is still
// refused.
func TestSharedRefusesAnEntryChangedAfterTheOneItTrusts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	s, err := OpenShared(path, time.Second, Stamp{})
	if err != nil {
		t.Fatal(err)
	}
	tag := func(id string) Entry {
		return Entry{Actor: "ana", Action: triage.ActionTag, Vhost: "/", Queue: "q", MessageIDs: []string{id}, Reason: "needs-fix"}
	}
	if _, err := s.Append(tag("m-1")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * holdFor) // the Shared has let go of the file
	o, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Append(tag("m-2")); err != nil { // another writer: legitimate
		t.Fatal(err)
	}
	o.Close()
	if _, err := s.Append(tag("m-3")); err != nil {
		t.Fatalf("an entry another writer appended was refused: %v", err)
	}
	time.Sleep(2 * holdFor)
	o, err = Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Append(tag("m-4")); err != nil {
		t.Fatal(err)
	}
	o.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEntries)
		v := b.Get(seqKey(4))
		return b.Put(seqKey(4), bytes.Replace(v, []byte(`"m-4"`), []byte(`"m-9"`), 1))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = s.Append(tag("m-5"))
	var de *DamagedError
	if !errors.As(err, &de) {
		t.Fatalf("append after entry 4 was changed: %v, want the journal refused as damaged", err)
	}
}
