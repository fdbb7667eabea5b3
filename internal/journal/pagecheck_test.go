package journal

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dlqt/dlqt/internal/triage"
)

// wideJournal writes entries of ids message ids each (about 40 bytes an
// id: an entry of a few hundred is a page of its own and more, as a
// replay's batches are), txs transactions of them, so the file has
// overflow pages and freed ones.
func wideJournal(t testing.TB, txs, perTx, ids int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range txs {
		err := j.db.Update(func(tx *bolt.Tx) error {
			for range perTx {
				e := Entry{Time: time.Unix(1_790_000_000+int64(n), 0), Actor: "ana", Action: triage.ActionReplayOutcome, Vhost: "/", Queue: "big.dlq", Reason: "resolved"}
				for k := range ids {
					e.MessageIDs = append(e.MessageIDs, fmt.Sprintf("%036d", n*ids+k))
				}
				if _, err := appendTx(tx, e); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// The check a Shared makes as it appends passes every journal bbolt's
// own check passes: small entries, entries of several pages, sub-buckets
// (the id index a discard's lookup builds), pages freed by later writes.
func TestTheAppendingCheckPassesWhatBboltsPasses(t *testing.T) {
	indexed := written(t, 200)
	j, err := Open(indexed, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Discarded("/", "q", []string{"m-1"}); err != nil { // builds an index bucket
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
	}{
		{"fifty small entries", written(t, 50)},
		{"small entries and an id index", indexed},
		{"entries of several pages, freed pages", wideJournal(t, 20, 10, 300)},
		{"one entry of a thousand pages", wideJournal(t, 1, 1, 100_000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkFilePages(tc.path); err != nil {
				t.Errorf("the appending check: %v", err)
			}
			if err := openAndCheckPages(t, tc.path); err != nil {
				t.Errorf("bbolt's check: %v", err)
			}
		})
	}
}

func openAndCheckPages(t *testing.T, path string) error {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	return checkPages(path, db)
}

// What the appending check refuses, and what bbolt's check said of the
// same damage.
func TestTheAppendingCheckRefusesADamagedFile(t *testing.T) {
	small := func(t *testing.T) string { return written(t, 50) }           // entries that share leaf pages
	wide := func(t *testing.T) string { return wideJournal(t, 6, 5, 300) } // a freelist of several ids
	for _, tc := range []struct {
		name    string
		journal func(t *testing.T) string
		damage  func(t *testing.T, path string)
		why     string
	}{
		{"flipped page headers", small, damageByName(t, "flipped page headers"), "damaged"},
		{"freelist emptied", small, damageByName(t, "freelist emptied"), "unreachable unfreed"},
		{"truncated to half", small, damageByName(t, "truncated to half"), "truncated"},
		{"a page reached and freed", wide, func(t *testing.T, path string) {
			editFreelist(t, path, func(ids []uint64, m metaPage) { ids[0] = m.root })
		}, "reachable freed"},
		{"a page freed twice", wide, func(t *testing.T, path string) {
			editFreelist(t, path, func(ids []uint64, _ metaPage) { ids[1] = ids[0] })
		}, "already freed"},
		{"a freed page outside the file", wide, func(t *testing.T, path string) {
			editFreelist(t, path, func(ids []uint64, m metaPage) { ids[0] = m.pgid + 10 })
		}, "outside the file"},
		{"two entries' keys out of order", small, func(t *testing.T, path string) {
			leafKeys(t, path, `{"seq":1,`, func(first, second []byte) {
				binary.BigEndian.PutUint64(first, binary.BigEndian.Uint64(second)+1)
			})
		}, "out of order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.journal(t)
			if err := checkFilePages(path); err != nil {
				t.Fatalf("before the damage: %v", err)
			}
			tc.damage(t, path)
			err := checkFilePages(path)
			if err == nil || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("the appending check: %v, want %q", err, tc.why)
			}
			t.Logf("the appending check: %v; bbolt's check at open: %v", err, openAndCheckPages(t, path))
		})
	}
}

func damageByName(t *testing.T, name string) func(*testing.T, string) {
	for _, d := range damages() {
		if d.name == name {
			return d.damage
		}
	}
	t.Fatalf("no damage %q", name)
	return nil
}

// editFreelist changes the ids of the file's freelist page in place.
func editFreelist(t *testing.T, path string, edit func(ids []uint64, m metaPage)) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := latestMeta(path, f)
	if err != nil {
		t.Fatal(err)
	}
	page := make([]byte, m.pageSize)
	at := int64(m.freelist) * int64(m.pageSize)
	if _, err := f.ReadAt(page, at); err != nil {
		t.Fatal(err)
	}
	n, off := int(binary.NativeEndian.Uint16(page[10:12])), pageHeaderSize
	if n == 0xFFFF {
		n, off = int(binary.NativeEndian.Uint64(page[pageHeaderSize:])), off+8
	}
	if n < 2 || off+n*8 > len(page) {
		t.Fatalf("the freelist has %d ids in its first page; the test needs 2 or more", n)
	}
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = binary.NativeEndian.Uint64(page[off+i*8:])
	}
	edit(ids, m)
	for i, id := range ids {
		binary.NativeEndian.PutUint64(page[off+i*8:], id)
	}
	if _, err := f.WriteAt(page, at); err != nil {
		t.Fatal(err)
	}
}

// leafKeys hands edit the first two keys of the leaf page that holds
// needle, and writes them back.
func leafKeys(t *testing.T, path, needle string, edit func(first, second []byte)) {
	t.Helper()
	data, at := pageHolding(t, path, needle)
	p := data[at:]
	if binary.NativeEndian.Uint16(p[8:10]) != leafPage || binary.NativeEndian.Uint16(p[10:12]) < 2 {
		t.Fatalf("%q is not on a leaf page of 2 or more elements", needle)
	}
	key := func(i int) []byte {
		el := p[pageHeaderSize+i*elementSize:]
		pos, size := int(binary.NativeEndian.Uint32(el[4:8])), int(binary.NativeEndian.Uint32(el[8:12]))
		return p[pageHeaderSize+i*elementSize+pos:][:size]
	}
	edit(key(0), key(1))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// The check a Shared makes every few seconds while a replay appends reads
// the file a page at a time: it leaves the process's RSS as it was. Made
// through a memory map, as bbolt's check reads, it brought the whole file
// in (the kernel maps a touched page's neighbours too): 56 MB of an 82 MB
// journal of a replay of 1,000,000, every few seconds.
func TestTheAppendingCheckLeavesTheJournalOutOfRSS(t *testing.T) {
	path := wideJournal(t, 40, 10, 500) // about 8 MB, in the page cache: just written
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	before := rssFileKB(t)
	if err := checkFilePages(path); err != nil {
		t.Fatal(err)
	}
	grew := rssFileKB(t) - before
	t.Logf("a %d KB journal: the appending check added %d KB of file pages to RSS", st.Size()>>10, grew)
	if limit := st.Size() >> 10 / 10; grew > limit {
		t.Errorf("the check added %d KB of the file's %d KB to RSS; want under %d", grew, st.Size()>>10, limit)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		before := rssFileKB(t)
		for err := range tx.Check() {
			return err
		}
		t.Logf("bbolt's check, through its map: %d KB", rssFileKB(t)-before)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// rssFileKB is the process's resident file pages (Linux).
func rssFileKB(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "RssFile:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// FuzzTheAppendingCheck overwrites bytes of a journal anywhere and runs
// the check a Shared makes as it appends: it says what is wrong or finds
// nothing, never panics (it runs without guard here), and what it passes
// bbolt's own check at open passes too. wide picks a journal of entries of
// several pages, with freed pages, over one of small entries.
func FuzzTheAppendingCheck(f *testing.F) {
	for _, seed := range []struct {
		off  uint32
		with []byte
	}{
		{2*4096 + 8, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}, // a page header's flags and count
		{3 * 4096, make([]byte, 4096)},                                       // a page zeroed
		{5*4096 + 100, []byte(`{"seq":7}`)},                                  // an entry's bytes
		{2*4096 + 16 + 4, []byte{0xff, 0x7f, 0, 0}},                          // an element's offset
	} {
		f.Add(seed.off, seed.with, false)
		f.Add(seed.off, seed.with, true)
	}
	var pristine [2][]byte
	for i, fixture := range []string{written(f, 50), wideJournal(f, 6, 5, 300)} {
		data, err := os.ReadFile(fixture)
		if err != nil {
			f.Fatal(err)
		}
		pristine[i] = data
	}
	f.Fuzz(func(t *testing.T, off uint32, with []byte, wide bool) {
		which := 0
		if wide {
			which = 1
		}
		data := append([]byte(nil), pristine[which]...)
		copy(data[int(off)%len(data):], with)
		path := filepath.Join(t.TempDir(), "journal.db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := checkFile(path); err != nil {
			return // refused before any page check: bbolt is never opened on it
		}
		if checkFilePages(path) == nil {
			if err := openAndCheckPages(t, path); err != nil {
				t.Errorf("the appending check passed what bbolt's check refuses: %v", err)
			}
		}
	})
}
