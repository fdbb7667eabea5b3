// Package journal is dlqt's local audit log: an append-only, SHA-256
// hash-chained list of actions in a bbolt file, with the tags of messages.
package journal

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/dlqt/dlqt/internal/triage"
)

// Entry is one action. Hash = SHA-256 over PrevHash and the canonical JSON
// of the entry with Hash empty; Seq starts at 1 and has no gaps.
type Entry struct {
	Seq        uint64         `json:"seq"`
	Time       time.Time      `json:"time"`
	Actor      string         `json:"actor"`
	Host       string         `json:"host"`
	Action     triage.Action  `json:"action"`
	Vhost      string         `json:"vhost"`
	Queue      string         `json:"queue"`
	MessageIDs []string       `json:"message_ids"`
	Reason     string         `json:"reason"`
	Details    map[string]any `json:"details,omitempty"`
	// Version is the dlqt build that wrote the entry and Context the named
	// broker context it acted on. Entries written before they existed lack
	// them; omitempty keeps those entries' canonical form, and so their
	// hashes, as they were.
	Version  string `json:"version,omitempty"`
	Context  string `json:"context,omitempty"`
	PrevHash string `json:"prev_hash"`
	Hash     string `json:"hash"`
}

// ErrLocked means another process holds the journal file.
var ErrLocked = errors.New("journal is in use by another dlqt")

var (
	bucketEntries = []byte("entries")
	bucketTags    = []byte("tags")
)

// Journal is an open journal file. Safe for concurrent use (bbolt
// serialises writers).
type Journal struct {
	db   *bolt.DB
	path string
}

// Open opens or creates the journal at path. A second process holding the
// file makes Open fail after timeout with ErrLocked, never hang.
func Open(path string, timeout time.Duration) (*Journal, error) {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("journal %s: %w (waited %s for its lock; close the other dlqt or pass --journal)", path, ErrLocked, timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketEntries, bucketTags} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return &Journal{db: db, path: path}, nil
}

// Path is the file the journal lives in.
func (j *Journal) Path() string { return j.path }

// Close releases the file.
func (j *Journal) Close() error { return j.db.Close() }

// Append writes e as the next entry, filling Seq, Time (when zero), PrevHash
// and Hash, and returns what was written. Tag and untag entries also update
// the tags of their messages, in the same transaction.
func (j *Journal) Append(e Entry) (Entry, error) {
	if e.Action == "" {
		return Entry{}, errors.New("journal: an entry needs an action")
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	err := j.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEntries)
		e.Seq, e.PrevHash = 1, ""
		if k, v := b.Cursor().Last(); k != nil {
			var last Entry
			if err := json.Unmarshal(v, &last); err != nil {
				return fmt.Errorf("last entry is unreadable: %w", err)
			}
			e.Seq, e.PrevHash = last.Seq+1, last.Hash
		}
		sealed, data, err := seal(e)
		if err != nil {
			return err
		}
		e = sealed
		if err := b.Put(seqKey(e.Seq), data); err != nil {
			return err
		}
		return applyTags(tx.Bucket(bucketTags), e)
	})
	if err != nil {
		return Entry{}, fmt.Errorf("journal %s: append %s: %w", j.path, e.Action, err)
	}
	return e, nil
}

// Entries returns every entry in order.
func (j *Journal) Entries() ([]Entry, error) {
	var out []Entry
	err := j.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketEntries).ForEach(func(k, v []byte) error {
			var e Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("entry %d is unreadable: %w", binary.BigEndian.Uint64(k), err)
			}
			out = append(out, e)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", j.path, err)
	}
	return out, nil
}

// Records reads every entry back as the record it was written from, in
// order: what the use cases rebuild their state from (a replay's resume).
func (j *Journal) Records() ([]triage.Recorded, error) {
	es, err := j.Entries()
	if err != nil {
		return nil, err
	}
	out := make([]triage.Recorded, len(es))
	for i, e := range es {
		out[i] = triage.Recorded{Seq: e.Seq, Time: e.Time, Actor: e.Actor, Host: e.Host, Record: triage.Record{
			Action: e.Action, Vhost: e.Vhost, Queue: e.Queue, MessageIDs: e.MessageIDs, Reason: e.Reason, Details: e.Details,
		}}
	}
	return out, nil
}

// Verify recomputes the whole chain of the file.
func (j *Journal) Verify() error {
	es, err := j.Entries()
	if err != nil {
		return err
	}
	return VerifyChain(es)
}

// Tags returns the current tags of each message id asked for (tags added
// minus tags removed), keyed by id; ids without tags are absent.
func (j *Journal) Tags(vhost, queue string, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	err := j.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTags)
		for _, id := range ids {
			v := b.Get(tagKey(vhost, queue, id))
			if v == nil {
				continue
			}
			var tags []string
			if err := json.Unmarshal(v, &tags); err != nil {
				return err
			}
			if len(tags) > 0 {
				out[id] = tags
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("journal %s: tags: %w", j.path, err)
	}
	return out, nil
}

// applyTags keeps the per-message tag index in step with tag/untag entries;
// the tag is the entry's Reason.
func applyTags(b *bolt.Bucket, e Entry) error {
	if e.Action != triage.ActionTag && e.Action != triage.ActionUntag {
		return nil
	}
	if e.Reason == "" {
		return errors.New("a tag entry needs the tag in Reason")
	}
	for _, id := range e.MessageIDs {
		key := tagKey(e.Vhost, e.Queue, id)
		var tags []string
		if v := b.Get(key); v != nil {
			if err := json.Unmarshal(v, &tags); err != nil {
				return err
			}
		}
		i := slices.Index(tags, e.Reason)
		switch {
		case e.Action == triage.ActionTag && i < 0:
			tags = append(tags, e.Reason)
			slices.Sort(tags)
		case e.Action == triage.ActionUntag && i >= 0:
			tags = slices.Delete(tags, i, i+1)
		}
		data, err := json.Marshal(tags)
		if err != nil {
			return err
		}
		if err := b.Put(key, data); err != nil {
			return err
		}
	}
	return nil
}

func seqKey(seq uint64) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint64(k, seq)
	return k
}

// tagKey separates its parts with NUL, which no vhost, queue or id we store contains
// after sanitising.
func tagKey(vhost, queue, id string) []byte {
	return []byte(vhost + "\x00" + queue + "\x00" + id)
}
