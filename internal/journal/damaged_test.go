package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// written is a closed journal of n entries, with its head file.
func written(t testing.TB, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := j.Append(Entry{Actor: "ana", Action: triage.ActionTag, Vhost: "/", Queue: "q", MessageIDs: []string{fmt.Sprint("m-", i)}, Reason: "needs-fix"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// refused checks that err is one line naming the file and the way out.
func refused(t *testing.T, err error, path, why string) {
	t.Helper()
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("err = %v, want a damaged journal", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, path) || !strings.Contains(msg, "move it and journal.db.head aside") || !strings.Contains(msg, why) {
		t.Errorf("err = %q, want one line naming %s, %q and the way out", msg, path, why)
	}
}

// damage is one way a journal of 50 entries gets damaged, and the words
// its refusal must hold.
type damage struct {
	name   string
	damage func(t *testing.T, path string)
	why    string
}

// damages are the ways a journal is damaged that every open refuses.
func damages() []damage {
	return []damage{
		{"flipped page headers", func(t *testing.T, path string) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			const page = 4096
			for off := 2 * page; off+16 <= len(data); off += page { // every page after the two metas
				for i := 8; i < 16; i++ { // flags, count, overflow
					data[off+i] ^= 0xff
				}
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "damaged"},
		{"freelist emptied", func(t *testing.T, path string) {
			// every freed page then reads as unreachable and unfreed: one
			// finding of bbolt's check each
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, ok := readMeta(f, 0)
			if m2, ok2 := readMeta(f, 4096); ok2 && (!ok || m2.txid > m.txid) {
				m, ok = m2, true
			}
			if !ok {
				t.Fatal("no meta page")
			}
			meta := make([]byte, pageHeaderSize+metaSize)
			if _, err := f.ReadAt(meta, int64(m.txid%2)*int64(m.pageSize)); err != nil {
				t.Fatal(err)
			}
			freelist := int64(binary.NativeEndian.Uint64(meta[pageHeaderSize+32:]))
			if _, err := f.WriteAt([]byte{0, 0}, freelist*int64(m.pageSize)+10); err != nil { // its count
				t.Fatal(err)
			}
		}, "unreachable unfreed"},
		{"truncated to 0 bytes", func(t *testing.T, path string) {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		}, "it is empty but 50 entries were written"},
		{"truncated to half", func(t *testing.T, path string) {
			st, _ := os.Stat(path)
			if err := os.Truncate(path, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, "truncated"},
		{"deleted", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, "it is missing but 50 entries were written"},
		{"replaced by another journal", func(t *testing.T, path string) {
			other, err := os.ReadFile(written(t, 60))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, other, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "the file was replaced"},
		{"replaced by a shorter journal", func(t *testing.T, path string) {
			other, err := os.ReadFile(written(t, 3))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, other, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "holds 3 entries but 50 were written"},
	}
}

func TestADamagedJournalIsRefusedInOneLine(t *testing.T) {
	for _, c := range damages() {
		t.Run(c.name, func(t *testing.T) {
			path := written(t, 50)
			c.damage(t, path)
			j, err := Open(path, time.Second)
			if err == nil {
				j.Close()
			}
			refused(t, err, path, c.why)
			j, err = OpenReadOnly(path, time.Second)
			if err == nil {
				err = j.Verify()
				j.Close()
			}
			if err == nil {
				t.Error("verify found nothing wrong")
			}
		})
	}
}

// verify reads a journal it may not write: a read-only file, and a journal
// opened for reading changes nothing in it.
func TestVerifyOpensAReadOnlyJournal(t *testing.T) {
	path := written(t, 5)
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	j, err := OpenReadOnly(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Verify(); err != nil {
		t.Error(err)
	}
	if es, _ := j.Entries(); len(es) != 5 {
		t.Errorf("%d entries, want 5", len(es))
	}
	if _, err := j.Append(Entry{Action: "note"}); err == nil {
		t.Error("a read-only journal took an append")
	}
	j.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("reading the journal changed its file")
	}
}

// A head file that lags the journal (a crash between an append and its
// head write) is brought up to date, not reported.
func TestALaggingHeadFileIsCaughtUp(t *testing.T) {
	path := written(t, 5)
	if err := writeHead(path, head{Entries: 3, Hash: mustEntries(t, path)[2].Hash}); err != nil {
		t.Fatal(err)
	}
	j, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	if h, _, _ := readHead(path); h.Entries != 5 {
		t.Errorf("head records %d entries, want 5", h.Entries)
	}
}

func mustEntries(t *testing.T, path string) []Entry {
	t.Helper()
	j, err := OpenReadOnly(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	es, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// verify works beside a running dlqt, which holds the journal's lock.
func TestVerifyReadsAJournalInUse(t *testing.T) {
	path := written(t, 4)
	w, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := OpenReadOnly(path, 200*time.Millisecond)
	if err != nil {
		t.Fatalf("open beside a writer: %v", err)
	}
	defer r.Close()
	if err := r.Verify(); err != nil {
		t.Error(err)
	}
	if es, _ := r.Entries(); len(es) != 4 {
		t.Errorf("%d entries, want 4", len(es))
	}
}

// The way out works: with the journal and its head file moved aside, a new
// journal opens at the same path.
func TestTheWayOutOfADamagedJournalWorks(t *testing.T) {
	path := written(t, 5)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, time.Second); !errors.Is(err, ErrDamaged) {
		t.Fatalf("err = %v", err)
	}
	for _, p := range []string{path, headPath(path)} {
		if err := os.Rename(p, p+".damaged"); err != nil {
			t.Fatal(err)
		}
	}
	j, err := Open(path, time.Second)
	if err != nil {
		t.Fatalf("a new journal after moving the damaged one aside: %v", err)
	}
	j.Close()
}
