package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dlqt/dlqt/internal/triage"
)

// BenchmarkAppend is one durable, chained entry per op: what a tag or a
// replay outcome costs.
func BenchmarkAppend(b *testing.B) {
	j, err := Open(filepath.Join(b.TempDir(), "journal.db"), time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	e := Entry{Actor: "ana@bastion", Action: triage.ActionTag, Vhost: "/", Queue: "orders.dlq.q", MessageIDs: []string{"msg-1"}, Reason: "poison"}
	for b.Loop() {
		if _, err := j.Append(e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify10k recomputes a chain of 10,000 entries.
func BenchmarkVerify10k(b *testing.B) {
	es := make([]Entry, 10000)
	prev := ""
	for i := range es {
		e := Entry{Seq: uint64(i + 1), Time: time.Unix(1_790_000_000+int64(i), 0).UTC(), Actor: "a", Action: "note", MessageIDs: []string{}, PrevHash: prev}
		e.Hash, _ = hashOf(e)
		es[i], prev = e, e.Hash
	}
	for b.Loop() {
		if err := VerifyChain(es); err != nil {
			b.Fatal(err)
		}
	}
}

// benchEntries is how many entries the open and page benchmarks' journal
// holds: a busy team's year.
const benchEntries = 100_000

// bigJournal writes a closed journal of n entries (tags, and discard
// decisions with their outcomes, as a session writes them) with its head
// file, in one transaction so the fixture costs seconds, not an fsync each.
func bigJournal(b testing.TB, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "journal.db")
	j, err := Open(path, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	var last Entry
	const batch = 5000 // one huge transaction costs more than a few
	for from := 0; from < n; from += batch {
		err = j.db.Update(func(tx *bolt.Tx) error {
			for i := from; i < min(from+batch, n); i++ {
				e := Entry{Time: time.Unix(1_790_000_000+int64(i), 0), Actor: "ana@bastion", Host: "bastion", Action: triage.ActionTag,
					Vhost: "/", Queue: fmt.Sprintf("orders-%d.dlq", i%20), MessageIDs: []string{fmt.Sprint("msg-", i)}, Reason: "poison"}
				if i%10 == 0 {
					e.Action, e.Details = triage.ActionDiscard, map[string]any{"step": "decision", "count": 3}
				}
				var err error
				if last, err = appendTx(tx, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	j.noteHead(last)
	if err := j.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// bench100k is one journal of benchEntries entries for every benchmark
// of a run (writing it takes seconds); TestMain removes it.
var bench100k struct {
	once sync.Once
	dir  string
	path string
}

func journal100k(b *testing.B) string {
	bench100k.once.Do(func() {
		dir, err := os.MkdirTemp("", "dlqt-bench-journal-")
		if err != nil {
			b.Fatal(err)
		}
		bench100k.dir = dir
		src := bigJournal(b, benchEntries)
		for _, name := range []string{src, headPath(src)} {
			data, err := os.ReadFile(name)
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), data, 0o600); err != nil {
				b.Fatal(err)
			}
		}
		bench100k.path = filepath.Join(dir, filepath.Base(src))
	})
	if bench100k.path == "" {
		b.Fatal("the 100,000-entry journal was not written")
	}
	return bench100k.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench100k.dir != "" {
		os.RemoveAll(bench100k.dir)
	}
	os.Exit(code)
}

// BenchmarkOpenToFirstScreen100k is what the TUI's first screen waits for
// of its journal at 100,000 entries. before: the open checked the whole
// chain (OpenShared), as every headless command still does. after: the
// open checks what costs the same at any size (OpenSharedUnverified) and
// the journal screen reads its newest page.
func BenchmarkOpenToFirstScreen100k(b *testing.B) {
	path := journal100k(b)
	b.Run("before", func(b *testing.B) {
		for b.Loop() {
			s, err := OpenShared(path, time.Second, Stamp{})
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
	b.Run("after", func(b *testing.B) {
		for b.Loop() {
			s, err := OpenSharedUnverified(path, time.Second, Stamp{})
			if err != nil {
				b.Fatal(err)
			}
			if es, _, err := s.Page(0, 256); err != nil || len(es) != 256 {
				b.Fatal(len(es), err)
			}
			s.Close()
		}
	})
}

// BenchmarkVerify100k is the whole check the TUI now runs after its first
// screen (pages, chain, head file), at 100,000 entries.
func BenchmarkVerify100k(b *testing.B) {
	path := journal100k(b)
	for b.Loop() {
		s, err := OpenSharedUnverified(path, time.Second, Stamp{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Verify(nil); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkJournalScreen100k is one read of the journal screen at 100,000
// entries on a checked journal, as the TUI reads it (the file opened for
// the read and closed after). before: every entry, and the chain checked
// again. after: the newest page of 256, checked within itself.
func BenchmarkJournalScreen100k(b *testing.B) {
	path := journal100k(b)
	s, err := OpenShared(path, time.Second, Stamp{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.Run("before", func(b *testing.B) {
		for b.Loop() {
			es, err := s.Entries()
			if err == nil {
				err = VerifyChain(es)
			}
			if err != nil || len(es) != benchEntries {
				b.Fatal(len(es), err)
			}
		}
	})
	b.Run("after", func(b *testing.B) {
		for b.Loop() {
			es, last, err := s.Page(0, 256)
			if err == nil {
				err = VerifyRun(es)
			}
			if err != nil || len(es) != 256 || last != benchEntries {
				b.Fatal(len(es), last, err)
			}
		}
	})
}

// BenchmarkSharedAppend100k is one append through a Shared at 100,000
// entries, checks as it appends included (see pageCheckShare); file is the
// check a Shared makes as it appends (checkFilePages), what a check at every
// append would add; pages is bbolt's check of every page, at open.
func BenchmarkSharedAppend100k(b *testing.B) {
	path := journal100k(b)
	s, err := OpenShared(path, time.Second, Stamp{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.Run("append", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := s.Append(Entry{Actor: "ana", Action: triage.ActionTag, Vhost: "/", Queue: "q", MessageIDs: []string{fmt.Sprint("b-", i)}, Reason: "needs-fix"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("file", func(b *testing.B) {
		for b.Loop() {
			if err := s.write(func(j *Journal) error { return j.checkFileAlone() }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pages", func(b *testing.B) {
		for b.Loop() {
			if err := s.write(func(j *Journal) error { return j.checkPagesAlone() }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
