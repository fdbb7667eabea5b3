package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// DamagedError is a journal that failed its integrity check: bbolt's own
// page checks, the hash chain, or its head file. Every action refuses it
// with this one line, which says the way out.
type DamagedError struct {
	Path   string
	Reason string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("journal %s is damaged: %s; dlqt will not use it: move it and %s aside (keep them as evidence) and dlqt starts a new one, or pass --journal", e.Path, e.Reason, filepath.Base(headPath(e.Path)))
}

// ErrDamaged matches every DamagedError.
var ErrDamaged = errors.New("journal is damaged")

func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

func damaged(path, format string, args ...any) error {
	return &DamagedError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// guard runs f and turns a bbolt panic (it asserts on damaged pages
// instead of returning errors) into a DamagedError.
//
// A damaged page can also point bbolt past the end of its mapping: with
// SetPanicOnFault that read is a panic here too, not a dead process.
func guard(path string, f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = damaged(path, "its pages do not read (%v)", r)
		}
	}()
	return f()
}

// bbolt's on-disk meta page, as written by go.etcd.io/bbolt v1.x: a 16-byte
// page header, then magic, version, page size, flags, root bucket (pgid,
// sequence), freelist pgid, high-water pgid, txid and an FNV-64a checksum
// of everything before it.
const (
	pageHeaderSize = 16
	metaSize       = 64
	boltMagic      = 0xED0CDAED
)

type metaPage struct {
	pageSize uint32
	root     uint64 // the root bucket's page
	freelist uint64
	pgid     uint64 // pages in use: the file must hold at least this many
	txid     uint64
}

// checkFile reads the two meta pages before bbolt maps the file: a file
// shorter than its own meta says would be mapped past its end, and the
// first read there kills the process with SIGBUS, which no recover catches.
// A missing file is fine (Open creates it); an empty one is only fine when
// the head file agrees (see checkHead).
func checkFile(path string) (size int64, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("journal %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("journal %s: %w", path, err)
	}
	if st.Size() == 0 {
		return 0, nil
	}
	m, ok := readMeta(f, 0)
	if !ok {
		return st.Size(), damaged(path, "its first page is not a bbolt meta page (%d bytes; truncated or overwritten)", st.Size())
	}
	if m2, ok := readMeta(f, int64(m.pageSize)); ok && m2.txid > m.txid {
		m = m2
	}
	if need := int64(m.pgid) * int64(m.pageSize); st.Size() < need {
		return st.Size(), damaged(path, "it is %d bytes but its pages need %d (truncated)", st.Size(), need)
	}
	if m.freelist != noFreelist { // bbolt reads it at every open, and trusts its count
		w := pageWalk{f: f, path: path, meta: m, seen: map[uint64]bool{}}
		if _, err := w.freelist(m.freelist); err != nil {
			return st.Size(), err
		}
	}
	return st.Size(), nil
}

func readMeta(r io.ReaderAt, off int64) (metaPage, bool) {
	buf := make([]byte, pageHeaderSize+metaSize)
	if _, err := r.ReadAt(buf, off); err != nil {
		return metaPage{}, false
	}
	b := buf[pageHeaderSize:]
	le := binary.LittleEndian
	if binary.NativeEndian.Uint32(b[0:4]) != boltMagic && le.Uint32(b[0:4]) != boltMagic {
		return metaPage{}, false
	}
	h := fnv.New64a()
	h.Write(b[:56])
	if h.Sum64() != binary.NativeEndian.Uint64(b[56:64]) {
		return metaPage{}, false
	}
	ne := binary.NativeEndian
	m := metaPage{pageSize: ne.Uint32(b[8:12]), root: ne.Uint64(b[16:24]), freelist: ne.Uint64(b[32:40]), pgid: ne.Uint64(b[40:48]), txid: ne.Uint64(b[48:56])}
	if m.pageSize < 512 || m.pageSize > 1<<20 {
		return metaPage{}, false
	}
	return m, true
}

// checkPages runs bbolt's own consistency check over every page.
func checkPages(path string, db *bolt.DB) error {
	return guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error { return checkTx(path, tx) })
	})
}

// checkTx runs bbolt's check in tx and reports its first finding. It reads
// the check to its end: the check runs in a goroutine of its own that goes
// on reading the mapped file after each finding it sends, so returning at
// the first one let the transaction end and the file be unmapped under it
// (2 of 768 verifies of damaged journals died with SIGSEGV), and left the
// goroutine blocked on its next send for good.
func checkTx(path string, tx *bolt.Tx, opts ...bolt.CheckOption) error {
	if err := checkBounds(path); err != nil {
		return err
	}
	var first error
	for err := range tx.Check(opts...) {
		if first == nil {
			first = damaged(path, "bbolt's check failed: %v", err)
		}
	}
	return first
}
