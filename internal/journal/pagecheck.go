package journal

import (
	"bytes"
	"encoding/binary"
)

// checkFilePages checks every page of the journal at path as bbolt's
// check does, reading the file a page at a time, never mapping it: the
// tree of every bucket (checkBounds' walk), each page reached once, the
// keys of each page in order and within the range its parent gives it,
// and every page below the file's high-water mark either reached or
// freed, none both, none freed twice.
//
// It is the check a Shared makes while it appends (checkPagesDue). bbolt's
// check reads through bbolt's memory map, and so did the walk before it:
// touching a page of a mapped file maps its neighbours too (the kernel's
// fault-around), so each check brought the whole file into the process's
// RSS: 82 MB of page cache for the journal of a replay of 1,000,000, on
// top of its heap, every few seconds. Read a page at a time it adds a
// page. The full check at open and at verify is still bbolt's own
// (checkTx).
func checkFilePages(path string) error {
	f, m, err := openPages(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := pageWalk{f: f, path: path, meta: m, reached: make([]bool, m.pgid), keys: true}
	var free freedPages
	if m.freelist != noFreelist {
		if free, err = w.freelist(m.freelist); err != nil {
			return err
		}
	}
	if err := w.tree(m.root, 0, nil, nil); err != nil {
		return err
	}
	if m.freelist == noFreelist {
		return nil // bbolt keeps none on disk: it finds the free pages at open
	}
	ids, err := free.page.readAt(free.at, free.n*8)
	if err != nil {
		return err
	}
	freed := make([]bool, m.pgid)
	for k := range free.n {
		id := binary.NativeEndian.Uint64(ids[k*8:])
		switch {
		case id < 2 || id >= m.pgid:
			return damaged(path, "the freelist names page %d, outside the file's %d pages", id, m.pgid)
		case freed[id]:
			return damaged(path, "page %d: already freed", id)
		case w.reached[id]:
			return damaged(path, "page %d: reachable freed", id)
		}
		freed[id] = true
	}
	for id := uint64(2); id < m.pgid; id++ {
		if !w.reached[id] && !freed[id] {
			return damaged(path, "page %d: unreachable unfreed", id)
		}
	}
	return nil
}

// keyOrder checks the keys of one page as the walk meets them, when the
// walk checks keys: each above the one before, the first not below lo,
// none at or past hi (nil: unbounded). A branch element's child gets the
// range from its key to the next element's (or hi).
type keyOrder struct {
	w      *pageWalk
	page   *pageBytes
	lo, hi []byte
	branch []byte // a branch page's elements: where the next key is
	prev   []byte
}

// next checks key i of n, ksize bytes at off in the page, and returns it
// with the key after it (a branch element's child's bound).
func (o *keyOrder) next(i, n, off, ksize uint64) (key, after []byte, err error) {
	if !o.w.keys {
		return nil, nil, nil
	}
	if key, err = o.bytesAt(off, ksize); err != nil {
		return nil, nil, err
	}
	id := o.page.id
	switch {
	case i == 0 && o.lo != nil && bytes.Compare(o.lo, key) > 0:
		return nil, nil, damaged(o.w.path, "page %d: its first key is below its parent's", id)
	case i > 0 && bytes.Compare(o.prev, key) >= 0:
		return nil, nil, damaged(o.w.path, "page %d: keys %d and %d are out of order", id, i-1, i)
	case o.hi != nil && bytes.Compare(key, o.hi) >= 0:
		return nil, nil, damaged(o.w.path, "page %d: key %d is not below its parent's next key", id, i)
	}
	o.prev, after = key, o.hi
	if o.branch != nil && i+1 < n {
		e := pageHeaderSize + (i+1)*elementSize
		el := o.branch[e : e+elementSize]
		pos, size := uint64(binary.NativeEndian.Uint32(el[0:4])), uint64(binary.NativeEndian.Uint32(el[4:8]))
		if e+pos+size > o.page.size {
			return nil, nil, damaged(o.w.path, "page %d: element %d's key lies outside its page", id, i+1)
		}
		if after, err = o.bytesAt(e+pos, size); err != nil {
			return nil, nil, err
		}
	}
	return key, after, nil
}

// bytesAt is n bytes at off in the page: from what was read of it when
// they are there.
func (o *keyOrder) bytesAt(off, n uint64) ([]byte, error) {
	if off+n <= uint64(len(o.page.head)) {
		return o.page.head[off : off+n], nil
	}
	return o.page.readAt(off, n)
}
