package journal

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dlqt/dlqt/internal/triage"
)

func seqsOf(es []Entry) []uint64 {
	out := make([]uint64, len(es))
	for i, e := range es {
		out[i] = e.Seq
	}
	return out
}

func TestPageReadsEntriesBeforeASeq(t *testing.T) {
	ten := written(t, 10)
	empty := filepath.Join(t.TempDir(), "journal.db")
	if j, err := Open(empty, time.Second); err != nil {
		t.Fatal(err)
	} else {
		j.Close()
	}
	cases := []struct {
		name     string
		path     string
		before   uint64
		n        int
		want     []uint64
		wantLast uint64
	}{
		{"first page: the newest", ten, 0, 4, []uint64{7, 8, 9, 10}, 10},
		{"middle page", ten, 7, 4, []uint64{3, 4, 5, 6}, 10},
		{"last page, short", ten, 3, 4, []uint64{1, 2}, 10},
		{"page past the end", ten, 1, 4, []uint64{}, 10},
		{"a page wider than the journal", ten, 0, 50, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10},
		{"before a seq not written yet: the newest", ten, 99, 3, []uint64{8, 9, 10}, 10},
		{"empty journal", empty, 0, 4, []uint64{}, 0},
		{"empty journal, past the end", empty, 5, 4, []uint64{}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := OpenReadOnly(c.path, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			es, last, err := j.Page(c.before, c.n)
			if err != nil {
				t.Fatal(err)
			}
			if got := seqsOf(es); !slices.Equal(got, c.want) || last != c.wantLast {
				t.Errorf("Page(%d, %d) = %v, last %d; want %v, last %d", c.before, c.n, got, last, c.want, c.wantLast)
			}
			if err := VerifyRun(es); err != nil {
				t.Errorf("the page does not verify within itself: %v", err)
			}
		})
	}
}

// Pages read one after the other cover the journal, each linked to the one
// after it, and one changed entry fails the check of its page.
func TestPagesLinkAndAChangedEntryFailsItsPage(t *testing.T) {
	path := written(t, 10)
	j, err := OpenReadOnly(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var all []Entry
	for before := uint64(0); ; {
		es, _, err := j.Page(before, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 0 {
			break
		}
		all = append(slices.Clone(es), all...)
		before = es[0].Seq
	}
	j.Close()
	if err := VerifyChain(all); err != nil {
		t.Errorf("the pages together: %v", err)
	}
	tamper(t, path, 5)
	j, err = OpenReadOnly(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	es, _, err := j.Page(7, 3)
	if err != nil {
		t.Fatal(err)
	}
	var ce *ChainError
	if err := VerifyRun(es); !errors.As(err, &ce) || ce.Seq != 5 {
		t.Errorf("VerifyRun of a page with entry 5 changed = %v, want entry 5 named", err)
	}
}

// tamper changes entry seq's reason in place: the file and its head stay
// valid, only the chain tells.
func tamper(t *testing.T, path string, seq uint64) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEntries)
		v := bytes.Replace(b.Get(seqKey(seq)), []byte("needs-fix"), []byte("looks-ok!"), 1)
		return b.Put(seqKey(seq), v)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The TUI's open: reads at once, no append before the whole check passed,
// the check's progress ends at every entry, and appends after it.
func TestUnverifiedSharedReadsAtOnceAndAppendsOnlyAfterItsCheck(t *testing.T) {
	path := bigJournal(t, 4500) // past progressEvery twice
	s, err := OpenSharedUnverified(path, time.Second, Stamp{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Verified() {
		t.Fatal("verified before its check")
	}
	if es, last, err := s.Page(0, 2); err != nil || last != 4500 || !slices.Equal(seqsOf(es), []uint64{4499, 4500}) {
		t.Fatalf("page before the check = %v, %d, %v", seqsOf(es), last, err)
	}
	if _, err := s.Tags("/", "q", []string{"m-1"}); err != nil {
		t.Fatalf("tags before the check: %v", err)
	}
	_, err = s.Append(Entry{Actor: "ana", Action: triage.ActionTag, Queue: "q", MessageIDs: []string{"m-1"}, Reason: "x"})
	if !errors.Is(err, ErrUnverified) {
		t.Fatalf("append before the check: %v, want ErrUnverified", err)
	}
	var seen [][2]uint64
	if err := s.Verify(func(done, total uint64) { seen = append(seen, [2]uint64{done, total}) }); err != nil {
		t.Fatal(err)
	}
	want := [][2]uint64{{2000, 4500}, {4000, 4500}, {4500, 4500}}
	if !slices.Equal(seen, want) {
		t.Errorf("progress %v, want %v", seen, want)
	}
	if !s.Verified() {
		t.Error("not verified after its check")
	}
	e, err := s.Append(Entry{Actor: "ana", Action: triage.ActionTag, Queue: "q", MessageIDs: []string{"m-1"}, Reason: "x"})
	if err != nil || e.Seq != 4501 {
		t.Fatalf("append after the check: %+v, %v", e, err)
	}
	if es, last, err := s.Page(0, 1); err != nil || last != 4501 || es[0].Hash != e.Hash {
		t.Fatalf("page after the append = %v, %d, %v", seqsOf(es), last, err)
	}
	if _, err := s.Verify(nil), s.Close(); err != nil {
		t.Errorf("a second Verify: %v", err)
	}
	// the file is released: another dlqt's full open checks what was appended
	j, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
}

// Every damage Open refuses, the unverified open or its check refuses with
// the same one line, and so does an entry changed in place, which only the
// whole check finds; nothing is appended to any of them.
func TestUnverifiedSharedStillRefusesADamagedJournal(t *testing.T) {
	cases := append(damages(), damage{"an entry changed in place", func(t *testing.T, path string) { tamper(t, path, 10) },
		"journal chain broken at entry 10: hash does not match"})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := written(t, 50)
			c.damage(t, path)
			s, err := OpenSharedUnverified(path, time.Second, Stamp{})
			if err == nil {
				defer s.Close()
				err = s.Verify(nil)
				if _, aerr := s.Append(Entry{Action: "note"}); !errors.Is(aerr, ErrDamaged) {
					t.Errorf("append after a failed check: %v, want the damage", aerr)
				}
				if again := s.Verify(nil); again != err {
					t.Errorf("a second Verify = %v, want the first's %v", again, err)
				}
				if s.Verified() {
					t.Error("verified a damaged journal")
				}
			}
			refused(t, err, path, c.why)
		})
	}
}

// Reads and index lookups go on while the check runs, on the file the
// check holds, and none of them waits for it.
func TestUnverifiedSharedReadsWhileItsCheckRuns(t *testing.T) {
	path := bigJournal(t, 10_000)
	s, err := OpenSharedUnverified(path, time.Second, Stamp{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan error, 1)
	go func() { done <- s.Verify(nil) }()
	reads := 0
	for checking := true; checking; reads++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			checking = false
		default:
		}
		if es, last, err := s.Page(0, 10); err != nil || len(es) != 10 || last != 10_000 {
			t.Fatalf("page during the check: %d entries, last %d, %v", len(es), last, err)
		}
		if _, err := s.Discarded("/", "orders-1.dlq", []string{"msg-1"}); err != nil {
			t.Fatalf("discard index during the check: %v", err)
		}
		if ids, err := s.OpenReplays(); err != nil || len(ids) != 0 {
			t.Fatalf("open replays during the check: %v, %v", ids, err)
		}
	}
	if !s.Verified() {
		t.Fatal("not verified after its check")
	}
	t.Logf("%d rounds of reads while the check ran", reads)
}

// Closing the journal stops its check (a TUI that quits does not wait for
// the rest of the chain), and nothing is appended after.
func TestClosingStopsTheCheck(t *testing.T) {
	path := bigJournal(t, 10_000)
	s, err := OpenSharedUnverified(path, time.Second, Stamp{})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var once bool
	done := make(chan error, 1)
	go func() {
		done <- s.Verify(func(n, _ uint64) {
			if !once {
				once = true
				close(started)
				time.Sleep(50 * time.Millisecond) // Close comes while the check is mid-chain
			}
		})
	}()
	<-started
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, errClosing) {
		t.Fatalf("Verify after Close = %v, want it stopped", err)
	}
	if _, err := s.Append(Entry{Action: "note"}); err == nil {
		t.Fatal("an append after a stopped check")
	}
	if s.Verified() {
		t.Fatal("a stopped check verified the journal")
	}
}
