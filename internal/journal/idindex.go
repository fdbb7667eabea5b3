package journal

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// An id index maps vhost NUL queue NUL message id to the seq of an entry
// (tagKey -> seqKey). The discard and interrupted-discard indexes are id
// indexes: derived from the entries, caught up lazily from the seq stored
// under keyIndexedTo, and outside the hash chain, so deleting the bucket
// only makes the next lookup rebuild it.
type idIndex struct {
	bucket []byte
	what   string // names the lookup in errors
	// index applies one entry to the bucket; entries, for looking back.
	index func(entries, idx *bolt.Bucket, e Entry) error
}

// lookup catches the index up with the entries written since the last one
// and returns the seq each asked-for id maps to; other ids are absent.
func (x idIndex) lookup(j *Journal, vhost, queue string, ids []string) (map[string]uint64, error) {
	out := map[string]uint64{}
	err := j.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(x.bucket)
		if err != nil {
			return err
		}
		if err := x.catchUp(tx.Bucket(bucketEntries), b); err != nil {
			return err
		}
		for _, id := range ids {
			if v := b.Get(tagKey(vhost, queue, id)); len(v) == 8 {
				out[id] = binary.BigEndian.Uint64(v)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("journal %s: %s: %w", j.path, x.what, err)
	}
	return out, nil
}

// catchUp indexes the entries after the last one indexed.
func (x idIndex) catchUp(entries, idx *bolt.Bucket) error {
	var from uint64
	if v := idx.Get(keyIndexedTo); len(v) == 8 {
		from = binary.BigEndian.Uint64(v)
	}
	c := entries.Cursor()
	last := from
	for k, v := c.Seek(seqKey(from + 1)); k != nil; k, v = c.Next() {
		var e Entry
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("entry %d is unreadable: %w", binary.BigEndian.Uint64(k), err)
		}
		last = e.Seq
		if err := x.index(entries, idx, e); err != nil {
			return err
		}
	}
	if last == from {
		return nil
	}
	return idx.Put(keyIndexedTo, seqKey(last))
}
