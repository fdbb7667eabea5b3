package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// checkReaders counts the goroutines of bbolt's page check still alive: a
// check left behind reads the mapped file after its transaction ended,
// which crashed verify with SIGSEGV once the file was unmapped.
func checkReaders() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "bbolt.(*Tx).check(")
}

// leftReaders waits a moment for check goroutines to end (a drained one
// ends at once) and reports those still there.
func leftReaders(before int) int {
	deadline := time.Now().Add(2 * time.Second)
	for {
		n := checkReaders() - before
		if n <= 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// verifyDamaged opens path as verify and every action do and reports
// whether each refused it as damaged.
func verifyDamaged(t *testing.T, path string) {
	t.Helper()
	if j, err := Open(path, time.Second); err == nil {
		j.Close()
	} else if strings.Contains(err.Error(), "\n") {
		t.Errorf("Open: %q is not one line", err)
	}
	j, err := OpenReadOnly(path, time.Second)
	if err != nil {
		return
	}
	defer j.Close()
	if err := checkPages(path, j.db); err != nil && !errors.Is(err, ErrDamaged) {
		t.Errorf("page check: %v, want a damaged journal", err)
	}
	_ = j.Verify()
}

// A damaged journal's page check leaves nothing reading the file once it
// returned: every open of the damages above ends with no check goroutine
// alive. On the code that returned at the first finding, each one with two
// or more findings left a goroutine blocked mid-check (and, 2 runs in 768,
// reading a file already unmapped).
func TestADamagedJournalsCheckEndsBeforeItsFileCloses(t *testing.T) {
	before := checkReaders()
	for _, c := range damages() {
		path := written(t, 50)
		c.damage(t, path)
		verifyDamaged(t, path)
	}
	if n := leftReaders(before); n > 0 {
		t.Errorf("%d bbolt check goroutine(s) still read journals that were closed", n)
	}
}

// FuzzDamagedJournal overwrites bytes of a journal of 50 entries anywhere
// in the file and opens and verifies it: dlqt says what is wrong or finds
// nothing, but never panics, and no check outlives its open (run with
// -race: make test does, for this package's damaged-journal tests).
func FuzzDamagedJournal(f *testing.F) {
	for _, seed := range []struct {
		off  uint32
		with []byte
	}{
		{2*4096 + 8, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}, // a page header's flags and count
		{16, []byte("not a meta page")},                                      // the first meta
		{4096 + 20, []byte{0, 0, 0, 0}},                                      // the second meta
		{3 * 4096, make([]byte, 4096)},                                       // a page zeroed
		{5*4096 + 100, []byte(`{"seq":7}`)},                                  // an entry's bytes
	} {
		f.Add(seed.off, seed.with)
	}
	fixture := written(f, 50)
	pristine, err := os.ReadFile(fixture)
	if err != nil {
		f.Fatal(err)
	}
	headFile, err := os.ReadFile(headPath(fixture))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, off uint32, with []byte) {
		data := append([]byte(nil), pristine...)
		at := int(off) % len(data)
		copy(data[at:], with)
		path := filepath.Join(t.TempDir(), "journal.db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(headPath(path), headFile, 0o600); err != nil {
			t.Fatal(err)
		}
		before := checkReaders()
		verifyDamaged(t, path)
		if n := leftReaders(before); n > 0 {
			t.Errorf("%d bbolt check goroutine(s) outlived the open", n)
		}
	})
}

// A leaf element whose offset points far past its page made bbolt's check
// read outside the mapped file, in the check's own goroutine, where no
// recover reaches: the process died with SIGSEGV (found by
// FuzzDamagedJournal). The pages are walked from the file first, and such
// a page is refused in one line.
func TestAnElementPointingOutsideItsPageIsRefusedNotACrash(t *testing.T) {
	path := bigJournal(t, 300) // written in one transaction: each entry is on one page only
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(data, []byte(`{"seq":1,`))
	if at < 0 {
		t.Fatal("entry 1 is not in the file")
	}
	page := int64(at / 4096 * 4096)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	var pos [4]byte
	binary.NativeEndian.PutUint32(pos[:], 0x7fff_0000)
	if _, err := f.WriteAt(pos[:], page+pageHeaderSize+4); err != nil { // the first element's pos
		t.Fatal(err)
	}
	f.Close()
	j, err := OpenReadOnly(path, time.Second)
	if err == nil {
		j.Close()
	}
	refused(t, err, path, "outside")
}
