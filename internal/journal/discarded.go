package journal

import (
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

// discardedIndex holds the latest discard outcome naming each id.
var discardedIndex = idIndex{bucket: bucketDiscarded, what: "discarded messages", index: indexDiscardOutcome}

// Discarded returns, for the ids asked for, the seq of the latest discard
// outcome entry that names them in vhost/queue; ids never discarded are
// absent.
func (j *Journal) Discarded(vhost, queue string, ids []string) (map[string]uint64, error) {
	return discardedIndex.lookup(j, vhost, queue, ids)
}

// indexDiscardOutcome indexes the ids a discard outcome names.
func indexDiscardOutcome(_, idx *bolt.Bucket, e Entry) error {
	if string(e.Action) != string(triage.ActionDiscard) || e.Details["step"] != "outcome" {
		return nil
	}
	for _, id := range e.MessageIDs {
		if err := idx.Put(tagKey(e.Vhost, e.Queue, id), seqKey(e.Seq)); err != nil {
			return err
		}
	}
	return nil
}

// DiscardOutcome is entry seq if it is the outcome of a discard from
// vhost/queue: what a retry of that discard takes its reason and ids from.
func (j *Journal) DiscardOutcome(seq uint64, vhost, queue string) (Entry, error) {
	var e Entry
	found := false
	err := guard(j.path, func() error {
		return j.db.View(func(tx *bolt.Tx) error {
			v := tx.Bucket(bucketEntries).Get(seqKey(seq))
			if v == nil {
				return nil
			}
			found = true
			return json.Unmarshal(v, &e)
		})
	})
	switch {
	case err != nil:
		return e, fmt.Errorf("journal %s: entry %d: %w", j.path, seq, err)
	case !found:
		return e, fmt.Errorf("journal %s has no entry %d", j.path, seq)
	case string(e.Action) != string(triage.ActionDiscard) || e.Details["step"] != "outcome":
		return e, fmt.Errorf("journal entry %d is not the outcome of a discard (%s)", seq, e.Action)
	case e.Vhost != vhost || e.Queue != queue:
		return e, fmt.Errorf("journal entry %d discarded from %q in vhost %q, not from this queue", seq, e.Queue, e.Vhost)
	}
	return e, nil
}

// DiscardOutcome is Journal.DiscardOutcome on the shared file.
func (s *Shared) DiscardOutcome(seq uint64, vhost, queue string) (e Entry, err error) {
	err = s.write(func(j *Journal) error {
		e, err = j.DiscardOutcome(seq, vhost, queue)
		return err
	})
	return e, err
}
