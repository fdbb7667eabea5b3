package journal

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/dlqt/dlqt/internal/triage"
)

// The entry index finds a replay's entries, the replays still open, and a
// queue's history without reading every entry: a journal of a busy team
// holds hundreds of thousands, and the TUI asks for the open replays at
// every start. It is derived from the entries, never part of the hash
// chain: each Append indexes its entry in the same transaction, and a
// journal written before the index (or whose index was deleted) is indexed
// from the seq stored under indexedTo on its next open for writing. A
// read-only open whose index lags reads only the entries after it.
var (
	bucketIndex       = []byte("entry-index")   // keyIndexedTo -> seq
	bucketReplayIndex = []byte("replay-index")  // replay id NUL seq -> nil
	bucketOpenReplays = []byte("open-replays")  // replay id -> seq of its first entry, while started and not finished
	bucketQueueIndex  = []byte("queue-history") // vhost NUL queue NUL seq -> nil
)

var indexBuckets = [][]byte{bucketIndex, bucketReplayIndex, bucketOpenReplays, bucketQueueIndex}

// replayID is the replay an entry belongs to, "" for none.
func replayID(e Entry) string {
	if !e.Action.IsReplay() {
		return ""
	}
	id, _ := e.Details["replay_id"].(string)
	return id
}

// indexEntry adds e to the index buckets of tx.
func indexEntry(tx *bolt.Tx, e Entry) error {
	if e.Queue != "" {
		if err := tx.Bucket(bucketQueueIndex).Put(queueKey(e.Vhost, e.Queue, e.Seq), nil); err != nil {
			return err
		}
	}
	if id := replayID(e); id != "" {
		if err := indexReplay(tx, id, e); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketIndex).Put(keyIndexedTo, seqKey(e.Seq))
}

func indexReplay(tx *bolt.Tx, id string, e Entry) error {
	entries := tx.Bucket(bucketReplayIndex)
	if err := entries.Put(replayKey(id, e.Seq), nil); err != nil {
		return err
	}
	open := tx.Bucket(bucketOpenReplays)
	switch e.Action {
	case triage.ActionReplayStart: // a resumed replay is open again
		first, _ := entries.Cursor().Seek(replayKey(id, 0)) // there is one: e's
		return open.Put([]byte(id), slices.Clone(first[len(first)-8:]))
	case triage.ActionReplayFinish:
		return open.Delete([]byte(id))
	}
	return nil
}

// catchUpIndex indexes the entries written since the index last saw one
// (all of them in a journal from before it).
func catchUpIndex(tx *bolt.Tx) error {
	for _, name := range indexBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	b := tx.Bucket(bucketEntries)
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.Seek(seqKey(indexedTo(tx) + 1)); k != nil; k, v = c.Next() {
		e, err := indexedOf(v)
		if err != nil {
			return fmt.Errorf("entry %d is unreadable: %w", binary.BigEndian.Uint64(k), err)
		}
		if err := indexEntry(tx, e); err != nil {
			return err
		}
	}
	return nil
}

// indexedOf reads from a stored entry what indexEntry reads and no more:
// every append indexes the entry it wrote, and a replay's plan of 100,000
// messages decoded whole is a map per message.
func indexedOf(v []byte) (Entry, error) {
	var e struct {
		Seq    uint64        `json:"seq"`
		Action triage.Action `json:"action"`
		Vhost  string        `json:"vhost"`
		Queue  string        `json:"queue"`
		// raw, not decoded: a key is matched exactly, and the last of
		// two alike wins, as in Entry.Details
		Details map[string]json.RawMessage `json:"details"`
	}
	if err := json.Unmarshal(v, &e); err != nil {
		return Entry{}, err
	}
	out := Entry{Seq: e.Seq, Action: e.Action, Vhost: e.Vhost, Queue: e.Queue}
	var id string // not a string: no replay's, as replayID reads it
	if raw, ok := e.Details["replay_id"]; ok && json.Unmarshal(raw, &id) == nil {
		out.Details = map[string]any{"replay_id": id}
	}
	return out, nil
}

// indexedTo is the last seq the index holds (0: none, or no index).
func indexedTo(tx *bolt.Tx) uint64 {
	b := tx.Bucket(bucketIndex)
	if b == nil {
		return 0
	}
	if v := b.Get(keyIndexedTo); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// errStop ends a walk over the entries early.
var errStop = errors.New("stop")

// eachEntryAfter calls fn on every entry after seq, in order.
func eachEntryAfter(tx *bolt.Tx, seq uint64, fn func(Entry) error) error {
	b := tx.Bucket(bucketEntries)
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.Seek(seqKey(seq + 1)); k != nil; k, v = c.Next() {
		var e Entry
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("entry %d is unreadable: %w", binary.BigEndian.Uint64(k), err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// entryAt reads entry seq.
func entryAt(tx *bolt.Tx, seq uint64) (Entry, error) {
	var e Entry
	v := tx.Bucket(bucketEntries).Get(seqKey(seq))
	if v == nil {
		return e, fmt.Errorf("entry %d is indexed but missing", seq)
	}
	if err := json.Unmarshal(v, &e); err != nil {
		return e, fmt.Errorf("entry %d is unreadable: %w", seq, err)
	}
	return e, nil
}

func replayKey(id string, seq uint64) []byte {
	return append(append([]byte(id), 0), seqKey(seq)...)
}

func queueKey(vhost, queue string, seq uint64) []byte {
	return append([]byte(vhost+"\x00"+queue+"\x00"), seqKey(seq)...)
}

// seqsUnder are the seqs of the keys of b that start with prefix (each key
// is prefix then an 8-byte seq), in order.
func seqsUnder(b *bolt.Bucket, prefix []byte) []uint64 {
	if b == nil {
		return nil
	}
	var out []uint64
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) == len(prefix)+8 {
			out = append(out, binary.BigEndian.Uint64(k[len(prefix):]))
		}
	}
	return out
}

// view runs fn in a read transaction, guarded like every read.
func (j *Journal) view(what string, fn func(tx *bolt.Tx) error) error {
	err := guard(j.path, func() error { return j.db.View(fn) })
	if err != nil {
		return fmt.Errorf("journal %s: %s: %w", j.path, what, err)
	}
	return nil
}

// OpenReplays are the ids of the replays that started and never finished,
// in the order they were planned, found through the index.
func (j *Journal) OpenReplays() ([]string, error) {
	type open struct {
		id    string
		first uint64
	}
	var found []open
	err := j.view("open replays", func(tx *bolt.Tx) error {
		byID := map[string]uint64{}
		if b := tx.Bucket(bucketOpenReplays); b != nil {
			err := b.ForEach(func(k, v []byte) error {
				byID[string(k)] = binary.BigEndian.Uint64(v)
				return nil
			})
			if err != nil {
				return err
			}
		}
		err := eachEntryAfter(tx, indexedTo(tx), func(e Entry) error { // a lagging index: its tail
			switch id := replayID(e); {
			case id == "":
			case e.Action == triage.ActionReplayFinish:
				delete(byID, id)
			case e.Action == triage.ActionReplayStart:
				if _, ok := byID[id]; !ok {
					byID[id] = firstReplaySeq(tx, id, e.Seq)
				}
			}
			return nil
		})
		for id, first := range byID {
			found = append(found, open{id, first})
		}
		return err
	})
	slices.SortFunc(found, func(a, b open) int { return cmp.Compare(a.first, b.first) })
	ids := make([]string, len(found))
	for i, o := range found {
		ids[i] = o.id
	}
	return ids, err
}

// firstReplaySeq is the seq of replay id's first entry: from the index
// when it has one, else the start at seq (a lagging index of a read-only
// open orders by that instead, close enough for a banner).
func firstReplaySeq(tx *bolt.Tx, id string, seq uint64) uint64 {
	if seqs := seqsUnder(tx.Bucket(bucketReplayIndex), replayKey(id, 0)[:len(id)+1]); len(seqs) > 0 {
		return seqs[0]
	}
	return seq
}

// ReplayRecords are the records of one replay, in order, read through the
// index.
func (j *Journal) ReplayRecords(id string) ([]triage.Recorded, error) {
	var out []triage.Recorded
	err := j.view("replay "+id, func(tx *bolt.Tx) error {
		prefix := append([]byte(id), 0)
		for _, seq := range seqsUnder(tx.Bucket(bucketReplayIndex), prefix) {
			e, err := entryAt(tx, seq)
			if err != nil {
				return err
			}
			out = append(out, recorded(e))
		}
		return eachEntryAfter(tx, indexedTo(tx), func(e Entry) error {
			if replayID(e) == id {
				out = append(out, recorded(e))
			}
			return nil
		})
	})
	return out, err
}

// QueueHistory is what was done to one queue, newest first, at most limit
// entries (0: all), read through the index.
func (j *Journal) QueueHistory(vhost, queue string, limit int) ([]Entry, error) {
	var out []Entry
	err := j.view("history of "+queue, func(tx *bolt.Tx) error {
		var tail []Entry
		err := eachEntryAfter(tx, indexedTo(tx), func(e Entry) error {
			if e.Vhost == vhost && e.Queue == queue {
				tail = append(tail, e)
			}
			return nil
		})
		if err != nil {
			return err
		}
		slices.Reverse(tail)
		out = tail
		seqs := seqsUnder(tx.Bucket(bucketQueueIndex), []byte(vhost+"\x00"+queue+"\x00"))
		for i := len(seqs) - 1; i >= 0 && (limit <= 0 || len(out) < limit); i-- {
			e, err := entryAt(tx, seqs[i])
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, err
}

// recorded is an entry as the record it was written from.
func recorded(e Entry) triage.Recorded {
	return triage.Recorded{Seq: e.Seq, Time: e.Time, Actor: e.Actor, Host: e.Host, Record: triage.Record{
		Action: e.Action, Vhost: e.Vhost, Queue: e.Queue, MessageIDs: e.MessageIDs, Reason: e.Reason, Details: e.Details,
	}}
}
