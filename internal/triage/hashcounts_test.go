package triage

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"
)

// hashCounts answers as the map it replaced: for each hash, the count
// set last, 0 for one never set; through growth, the hash 0, hashes that
// share a slot, and counts that go back to one.
func TestHashCountsAnswerAsAMap(t *testing.T) {
	type set struct {
		h uint64
		n uint32
	}
	for _, tc := range []struct {
		name string
		sets []set
	}{
		{"none", nil},
		{"one, then counted again", []set{{7, 1}, {7, 2}, {7, 3}}},
		{"hashes of one slot", []set{{5, 1}, {5 + 1024, 1}, {5 + 2048, 2}, {6, 1}}},
		{"a count back to one", []set{{9, 4}, {9, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c hashCounts
			want := map[uint64]uint32{}
			for _, s := range tc.sets {
				c.set(s.h, s.n)
				want[s.h] = s.n
			}
			for h, n := range want {
				if got := c.get(h); got != n {
					t.Errorf("get(%d) = %d, want %d", h, got, n)
				}
			}
			if got := c.get(123456); got != 0 {
				t.Errorf("a hash never set counts %d", got)
			}
		})
	}
}

// The hash 0 is kept as 1 (0 marks an empty slot): the two count as one.
func TestHashCountsKeepTheHashZero(t *testing.T) {
	var c hashCounts
	c.set(0, 1)
	if c.get(0) != 1 || c.get(1) != 1 {
		t.Errorf("0 counts %d, 1 counts %d; want 1 and 1", c.get(0), c.get(1))
	}
	c.set(1, 2)
	if c.get(0) != 2 {
		t.Errorf("0 counts %d after 1 was counted twice, want 2", c.get(0))
	}
}

// FuzzHashCountsAnswerAsAMap runs a sequence of sets (8 bytes of hash, a
// byte of count, each) on both and compares every hash set.
func FuzzHashCountsAnswerAsAMap(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 4, 0, 0, 0, 0, 0, 0, 2})
	f.Add(make([]byte, 9*3000)) // the hash 0, again and again
	f.Fuzz(func(t *testing.T, ops []byte) {
		var c hashCounts
		want := map[uint64]uint32{}
		for len(ops) >= 9 {
			h, n := binary.LittleEndian.Uint64(ops)%4096, uint32(ops[8]%4)+1 // few hashes: slots shared, growth
			ops = ops[9:]
			c.set(h, n)
			want[key(h)] = n
		}
		for h, n := range want {
			if got := c.get(h); got != n {
				t.Fatalf("get(%d) = %d, want %d", h, got, n)
			}
		}
	})
}

// A million ids cost about 16 bytes each (a slot of 8 bytes, the table
// between three eighths and three quarters full); the map took 29.7.
func TestHashCountsOfAMillionKeepAFewBytesAHash(t *testing.T) {
	if testing.Short() {
		t.Skip("a million hashes")
	}
	const n = 1_000_000
	r := rand.New(rand.NewPCG(1, 2))
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = r.Uint64()
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c := &hashCounts{}
	for _, h := range hs {
		c.set(h, c.get(h)+1)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d hashes: %.1f MB, %.1f bytes a hash", n, float64(grew)/1e6, float64(grew)/n)
	if per := grew / n; per > 20 {
		t.Errorf("%d bytes a hash, want at most 20", per)
	}
	for _, h := range hs[:1000] {
		if c.get(h) != 1 {
			t.Fatalf("hash %d counts %d", h, c.get(h))
		}
	}
	runtime.KeepAlive(c)
}
