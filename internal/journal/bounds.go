package journal

import (
	"encoding/binary"
	"fmt"
	"os"
	"syscall"
)

// bbolt's page layout (go.etcd.io/bbolt v1.x): a header of id, flags,
// count and overflow, then count elements of 16 bytes whose pos is counted
// from the element itself; a bucket's value is its root page and sequence,
// followed by the page itself when the bucket is inline (root 0).
const (
	branchPage   = 0x01
	leafPage     = 0x02
	freelistPage = 0x10
	elementSize  = 16
	bucketLeaf   = 0x01
	inBucketSize = 16
	noFreelist   = ^uint64(0)
	maxTreeDepth = 64
)

// checkBounds walks, from the file and before bbolt's check does through
// its mapping, every page the check will read: the tree of each bucket and
// the freelist. bbolt's check trusts element offsets and page ids, runs in
// a goroutine of its own where no recover reaches, and a damaged offset
// made it read outside the mapping: SIGSEGV. A page id out of range, one
// reached twice (a cycle would recurse for ever), a page that is not what
// its parent says, or an element outside its page is refused here.
func checkBounds(path string) error {
	f, m, err := openPages(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// mapped, as bbolt maps it: a read per page cost 0.2 s at 100,000
	// entries, the map a tenth of that. The file holds at least its pages
	// (checkFile), and guard turns a fault into a panic it recovers.
	data, err := syscall.Mmap(int(f.Fd()), 0, int(m.pgid)*int(m.pageSize), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("journal %s: %w", path, err)
	}
	defer syscall.Munmap(data)
	w := pageWalk{f: f, data: data, path: path, meta: m, seen: map[uint64]bool{}}
	if m.freelist != noFreelist {
		if _, err := w.freelist(m.freelist); err != nil {
			return err
		}
	}
	return w.tree(m.root, 0, nil, nil)
}

// openPages opens the journal at path for a walk of its pages, with the
// meta page of its last transaction.
func openPages(path string) (*os.File, metaPage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, metaPage{}, fmt.Errorf("journal %s: %w", path, err)
	}
	m, err := latestMeta(path, f)
	if err != nil {
		f.Close()
		return nil, metaPage{}, err
	}
	return f, m, nil
}

// latestMeta is the meta page of f's last transaction, once the file is
// known to hold every page it names.
func latestMeta(path string, f *os.File) (metaPage, error) {
	m, ok := readMeta(f, 0)
	if m2, ok2 := readMeta(f, int64(m.pageSize)); ok2 && (!ok || m2.txid > m.txid) {
		m, ok = m2, true
	}
	if !ok {
		return m, damaged(path, "neither meta page is a bbolt meta page")
	}
	st, err := f.Stat()
	if err != nil {
		return m, fmt.Errorf("journal %s: %w", path, err)
	}
	if need := int64(m.pgid) * int64(m.pageSize); st.Size() < need || need <= 0 {
		return m, damaged(path, "it is %d bytes but its pages need %d (truncated)", st.Size(), need)
	}
	return m, nil
}

type pageWalk struct {
	f    *os.File
	data []byte // the file's pages, mapped; nil: read them with ReadAt
	path string
	meta metaPage
	seen map[uint64]bool
	// reached marks every page the walk reached, overflow included; nil:
	// not kept (checkBounds, before bbolt's check does it).
	reached []bool
	// keys: the walk checks each page's keys are in order, within the
	// range its parent gives it (checkFilePages; bbolt's check does it
	// otherwise).
	keys bool
}

// pageBytes is a page as the walk reads it: its first bytes (the header
// and the element array, all the walk needs of most pages), how long it
// is whole, and how to read more of it.
type pageBytes struct {
	id     uint64
	head   []byte
	size   uint64
	readAt func(off, n uint64) ([]byte, error)
}

// prefix returns the first n bytes of the page (n within size).
func (p *pageBytes) prefix(n uint64) ([]byte, error) {
	if uint64(len(p.head)) < n {
		b, err := p.readAt(0, n)
		if err != nil {
			return nil, err
		}
		p.head = b
	}
	return p.head[:n], nil
}

// read opens page id: its header and up to headRead bytes of it. Only the
// element arrays and bucket values are read, not every key and value: at
// 100,000 entries the file is 117 MB, most of it values.
func (w *pageWalk) read(id uint64) (*pageBytes, error) {
	ps := uint64(w.meta.pageSize)
	if id < 2 || id >= w.meta.pgid {
		return nil, damaged(w.path, "a page id %d is outside the file's %d pages", id, w.meta.pgid)
	}
	if w.reached == nil { // else marked with its overflow, below
		if w.seen[id] {
			return nil, damaged(w.path, "page %d is reached twice", id)
		}
		w.seen[id] = true
	}
	p := &pageBytes{id: id, readAt: func(off, n uint64) ([]byte, error) {
		if w.data != nil {
			return w.data[id*ps+off : id*ps+off+n], nil
		}
		b := make([]byte, n)
		if _, err := w.f.ReadAt(b, int64(id*ps+off)); err != nil {
			return nil, damaged(w.path, "page %d does not read (%v)", id, err)
		}
		return b, nil
	}}
	head, err := p.readAt(0, min(ps, headRead))
	if err != nil {
		return nil, err
	}
	p.head = head
	if self := binary.NativeEndian.Uint64(head[0:8]); self != id {
		return nil, damaged(w.path, "page %d calls itself page %d", id, self)
	}
	overflow := uint64(binary.NativeEndian.Uint32(head[12:16]))
	if id+overflow >= w.meta.pgid {
		return nil, damaged(w.path, "page %d runs %d pages past the file's %d pages", id, overflow, w.meta.pgid)
	}
	p.size = (overflow + 1) * ps
	if w.reached != nil {
		for k := id; k <= id+overflow; k++ {
			if w.reached[k] {
				return nil, damaged(w.path, "page %d is reached twice", k)
			}
			w.reached[k] = true
		}
	}
	return p, nil
}

// headRead is how much of a page the walk reads at first: the header and
// the elements of a full 4 KiB leaf of journal entries.
const headRead = 512

// freelist checks the freelist page id; what it lists is read by
// freedPages, when asked.
func (w *pageWalk) freelist(id uint64) (freed freedPages, err error) {
	p, err := w.read(id)
	if err != nil {
		return freed, err
	}
	if flags(p.head) != freelistPage {
		return freed, damaged(w.path, "page %d is not the freelist its meta page names", id)
	}
	n, at := uint64(count(p.head)), uint64(pageHeaderSize)
	if n == 0xFFFF { // a long freelist keeps its count in its first id
		n, at = binary.NativeEndian.Uint64(p.head[pageHeaderSize:]), at+8
	}
	if n > p.size || at+n*8 > p.size {
		return freed, damaged(w.path, "freelist page %d counts %d ids, more than it holds: outside its page", id, n)
	}
	return freedPages{page: p, at: at, n: n}, nil
}

// freedPages is where a freelist page keeps its n ids: from at.
type freedPages struct {
	page  *pageBytes
	at, n uint64
}

// tree checks the page id of a bucket and every page below it; with
// keys, that its keys lie in [lo, hi) (nil: unbounded).
func (w *pageWalk) tree(id uint64, depth int, lo, hi []byte) error {
	if depth > maxTreeDepth {
		return damaged(w.path, "page %d is %d levels deep", id, depth)
	}
	p, err := w.read(id)
	if err != nil {
		return err
	}
	return w.page(p, depth, lo, hi)
}

// page checks the elements of p (a page of the file, or an inline
// bucket's page within its parent, id 0) and what they lead to.
func (w *pageWalk) page(p *pageBytes, depth int, lo, hi []byte) error {
	f := flags(p.head)
	if f != branchPage && f != leafPage {
		return damaged(w.path, "page %d is neither a branch nor a leaf page (flags %#x)", p.id, f)
	}
	n := uint64(count(p.head))
	if f == branchPage && n == 0 { // bbolt's cursor reads its first element
		return damaged(w.path, "page %d is a branch page of no elements", p.id)
	}
	if pageHeaderSize+n*elementSize > p.size {
		return damaged(w.path, "page %d counts %d elements: they reach outside its page", p.id, n)
	}
	elems, err := p.prefix(pageHeaderSize + n*elementSize)
	if err != nil {
		return err
	}
	ne := binary.NativeEndian
	order := keyOrder{w: w, page: p, lo: lo, hi: hi}
	if f == branchPage && w.keys {
		order.branch = elems
	}
	for i := range n {
		e := pageHeaderSize + i*elementSize
		el := elems[e : e+elementSize]
		if f == branchPage {
			pos, ksize, child := uint64(ne.Uint32(el[0:4])), uint64(ne.Uint32(el[4:8])), ne.Uint64(el[8:16])
			if e+pos+ksize > p.size {
				return damaged(w.path, "page %d: element %d's key lies outside its page", p.id, i)
			}
			key, next, err := order.next(i, n, e+pos, ksize)
			if err != nil {
				return err
			}
			if err := w.tree(child, depth+1, key, next); err != nil {
				return err
			}
			continue
		}
		kind, pos, ksize, vsize := ne.Uint32(el[0:4]), uint64(ne.Uint32(el[4:8])), uint64(ne.Uint32(el[8:12])), uint64(ne.Uint32(el[12:16]))
		end := e + pos + ksize + vsize
		if end > p.size {
			return damaged(w.path, "page %d: element %d's key and value lie outside its page", p.id, i)
		}
		if _, _, err := order.next(i, n, e+pos, ksize); err != nil {
			return err
		}
		if kind&bucketLeaf == 0 {
			continue
		}
		v, err := p.readAt(end-vsize, vsize)
		if err != nil {
			return err
		}
		if err := w.bucket(p.id, v, depth); err != nil {
			return err
		}
	}
	return nil
}

// bucket checks a sub-bucket's value found on page id: its root page, or
// its inline page.
func (w *pageWalk) bucket(id uint64, v []byte, depth int) error {
	if len(v) < inBucketSize {
		return damaged(w.path, "page %d: a bucket's value is cut short", id)
	}
	if root := binary.NativeEndian.Uint64(v[0:8]); root != 0 {
		return w.tree(root, depth+1, nil, nil)
	}
	inline := v[inBucketSize:]
	if len(inline) < pageHeaderSize {
		return damaged(w.path, "page %d: an inline bucket is cut short", id)
	}
	if depth+1 > maxTreeDepth {
		return damaged(w.path, "page %d is %d levels deep", id, depth+1)
	}
	return w.page(&pageBytes{id: id, head: inline, size: uint64(len(inline)), readAt: func(off, n uint64) ([]byte, error) {
		return inline[off : off+n], nil
	}}, depth+1, nil, nil)
}

func flags(p []byte) uint16 { return binary.NativeEndian.Uint16(p[8:10]) }
func count(p []byte) uint16 { return binary.NativeEndian.Uint16(p[10:12]) }
