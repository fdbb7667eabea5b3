package journal

import (
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
