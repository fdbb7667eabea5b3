package journal

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/dlqt/dlqt/internal/triage"
)

// The discard index: vhost NUL queue NUL message id -> the seq of the
// latest discard outcome naming it, so that a browse meeting such a message
// again (its ack was never applied: a broker restart came first) can say
// so. It is derived from the entries, caught up lazily from the seq stored
// under indexedTo, and never part of the hash chain: deleting the bucket
// only makes the next lookup rebuild it.
var (
	bucketDiscarded = []byte("discarded-index")
	keyIndexedTo    = []byte("\x00indexed-to")
)

// Discarded returns, for the ids asked for, the seq of the latest discard
// outcome entry that names them in vhost/queue; ids never discarded are
// absent.
func (j *Journal) Discarded(vhost, queue string, ids []string) (map[string]uint64, error) {
	out := map[string]uint64{}
	err := j.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketDiscarded)
		if err != nil {
			return err
		}
		if err := catchUpDiscards(tx.Bucket(bucketEntries), b); err != nil {
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
		return nil, fmt.Errorf("journal %s: discarded messages: %w", j.path, err)
	}
	return out, nil
}

// catchUpDiscards indexes the discard outcomes written since the last
// lookup.
func catchUpDiscards(entries, idx *bolt.Bucket) error {
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
		if string(e.Action) != string(triage.ActionDiscard) || e.Details["step"] != "outcome" {
			continue
		}
		for _, id := range e.MessageIDs {
			if err := idx.Put(tagKey(e.Vhost, e.Queue, id), seqKey(e.Seq)); err != nil {
				return err
			}
		}
	}
	if last == from {
		return nil
	}
	return idx.Put(keyIndexedTo, seqKey(last))
}
