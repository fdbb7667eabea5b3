package triage

import "hash/maphash"

// hashCounts counts 64-bit hashes (a read's ids, by idSuffixer): an
// open-addressed table of the hashes seen (8 bytes a slot, linear probing,
// at most three quarters full) and, in a map of their own, the counts
// above one, which few ids have. A million cost 16.8 bytes each
// (TestHashCountsOfAMillionKeepAFewBytesAHash); the map[uint64]uint32 it
// replaces, 29.7 in the same test, and 32 MB of the heap at the peak of a
// replay of a million (the read for its plan).
type hashCounts struct {
	slots []uint64 // 0: empty; the hash 0 is kept as 1 (see key)
	n     int
	more  map[uint64]uint32 // counts of 2 and more
}

// key is h as the table keeps it: 0 marks an empty slot, so the hash 0
// counts as 1 (two ids are taken for one on a hash collision already;
// this makes it one value more likely, 2^-63).
func key(h uint64) uint64 { return max(h, 1) }

// get is how many times h was counted (what set last gave it).
func (c *hashCounts) get(h uint64) uint32 {
	h = key(h)
	if !c.has(h) {
		return 0
	}
	if m, ok := c.more[h]; ok {
		return m
	}
	return 1
}

// set makes h's count n (1 or more).
func (c *hashCounts) set(h uint64, n uint32) {
	h = key(h)
	c.insert(h)
	if n > 1 {
		if c.more == nil {
			c.more = map[uint64]uint32{}
		}
		c.more[h] = n
		return
	}
	delete(c.more, h)
}

func (c *hashCounts) has(h uint64) bool {
	if len(c.slots) == 0 {
		return false
	}
	mask := uint64(len(c.slots) - 1)
	for i := h & mask; c.slots[i] != 0; i = (i + 1) & mask {
		if c.slots[i] == h {
			return true
		}
	}
	return false
}

func (c *hashCounts) insert(h uint64) {
	if (c.n+1)*4 > len(c.slots)*3 {
		c.grow()
	}
	mask := uint64(len(c.slots) - 1)
	i := h & mask
	for ; c.slots[i] != 0; i = (i + 1) & mask {
		if c.slots[i] == h {
			return
		}
	}
	c.slots[i] = h
	c.n++
}

// grow doubles the table (1,024 slots at first) and places every hash again.
func (c *hashCounts) grow() {
	old := c.slots
	c.slots = make([]uint64, max(1024, 2*len(old)))
	mask := uint64(len(c.slots) - 1)
	for _, h := range old {
		if h == 0 {
			continue
		}
		i := h & mask
		for c.slots[i] != 0 {
			i = (i + 1) & mask
		}
		c.slots[i] = h
	}
}

// FirstSeen tells, id by id in queue order, the first of each id from
// the ones met before, keeping a hash of each (16.8 bytes an id, as
// hashCounts). The first of an id is exactly what Identify and SuffixIDs
// leave unsuffixed, so a reader that takes only first ones names them as
// a whole read would. Two ids of one hash count as one (2^-64 a pair):
// the later is then taken for a repeat, never a repeat for a first.
type FirstSeen struct {
	seed maphash.Seed
	seen hashCounts
}

// NewFirstSeen is a FirstSeen that has met no id yet.
func NewFirstSeen() *FirstSeen { return &FirstSeen{seed: maphash.MakeSeed()} }

// First records id and says whether it is the first of its id.
func (f *FirstSeen) First(id string) bool {
	h := maphash.String(f.seed, id)
	if f.seen.get(h) > 0 {
		return false
	}
	f.seen.set(h, 1)
	return true
}
