package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/dlqt/dlqt/internal/triage"
)

// The interrupted-discard index: vhost NUL queue NUL message id -> the seq
// of the discard entry that selected it (its decision by ids, or the ids a
// group or --where resolved to) while no outcome followed yet. A discard
// whose dlqt was killed during its acks leaves exactly these behind: the
// broker applied some acks, requeued the rest, and a browse that meets one
// of them says that it is still there. Like the discard index it is
// derived from the entries, caught up lazily, and outside the hash chain.
//
// The outcome of a discard closes the latest open selection of its queue;
// two discards of one queue running at once would close each other's
// (dlqt serialises its own, and the journal says who ran which). A
// selection a later one replaced while still open was interrupted: its ids
// stay until an outcome discards them.
var bucketInterrupted = []byte("interrupted-discard-index")

// openKey holds the seq of the latest selection of vhost/queue not yet
// closed by an outcome.
func openKey(vhost, queue string) []byte {
	return append([]byte("\x00open\x00"), tagKey(vhost, queue, "")...)
}

// interruptedIndex holds the ids of discard selections no outcome closed.
var interruptedIndex = idIndex{bucket: bucketInterrupted, what: "interrupted discards", index: indexDiscardSelection}

// DiscardsInterrupted returns, for the ids asked for, the seq of the
// discard entry that selected them for a discard that never journaled its
// outcome (dlqt was killed during it); other ids are absent.
func (j *Journal) DiscardsInterrupted(vhost, queue string, ids []string) (map[string]uint64, error) {
	return interruptedIndex.lookup(j, vhost, queue, ids)
}

// indexDiscardSelection opens a selection for every discard entry naming
// the ids it means to take, and closes it at the outcome of its queue.
func indexDiscardSelection(entries, idx *bolt.Bucket, e Entry) error {
	if string(e.Action) != string(triage.ActionDiscard) {
		return nil
	}
	switch e.Details["step"] {
	case "decision", "selected":
		return openSelection(idx, e)
	case "outcome":
		return closeSelection(entries, idx, e)
	}
	return nil
}

func openSelection(idx *bolt.Bucket, e Entry) error {
	if len(e.MessageIDs) == 0 { // a group's decision: its ids follow
		return nil
	}
	for _, id := range e.MessageIDs {
		if err := idx.Put(tagKey(e.Vhost, e.Queue, id), seqKey(e.Seq)); err != nil {
			return err
		}
	}
	return idx.Put(openKey(e.Vhost, e.Queue), seqKey(e.Seq))
}

// closeSelection takes the ids an outcome discarded out of the index
// (whichever discard had left them), then closes the open selection of
// its queue: what it named is accounted for by this outcome.
func closeSelection(entries, idx *bolt.Bucket, outcome Entry) error {
	vhost, queue := outcome.Vhost, outcome.Queue
	for _, id := range outcome.MessageIDs {
		if err := idx.Delete(tagKey(vhost, queue, id)); err != nil {
			return err
		}
	}
	seq := idx.Get(openKey(vhost, queue))
	if len(seq) != 8 {
		return nil
	}
	seq = bytes.Clone(seq)
	var open Entry
	if v := entries.Get(seq); v != nil {
		if err := json.Unmarshal(v, &open); err != nil {
			return fmt.Errorf("entry %d is unreadable: %w", binary.BigEndian.Uint64(seq), err)
		}
	}
	for _, id := range open.MessageIDs {
		k := tagKey(vhost, queue, id)
		if bytes.Equal(idx.Get(k), seq) {
			if err := idx.Delete(k); err != nil {
				return err
			}
		}
	}
	return idx.Delete(openKey(vhost, queue))
}
