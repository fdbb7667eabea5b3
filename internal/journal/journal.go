// Package journal is dlqt's local audit log: an append-only, SHA-256
// hash-chained list of actions in a bbolt file, with the tags of messages.
package journal

import (
	"time"
)

// Entry is one action. Hash = SHA-256(PrevHash || canonical JSON of the entry
// without Hash); Seq starts at 1.
type Entry struct {
	Seq        uint64         `json:"seq"`
	Time       time.Time      `json:"time"`
	Actor      string         `json:"actor"`
	Host       string         `json:"host"`
	Action     string         `json:"action"`
	Vhost      string         `json:"vhost"`
	Queue      string         `json:"queue"`
	MessageIDs []string       `json:"message_ids"`
	Reason     string         `json:"reason"`
	Details    map[string]any `json:"details,omitempty"`
	PrevHash   string         `json:"prev_hash"`
	Hash       string         `json:"hash"`
}

// Actions written by the read path.
const (
	ActionTag   = "tag"
	ActionUntag = "untag"
)

// Journal is an open journal file. Safe for concurrent use.
type Journal struct{}

// Open opens or creates the journal at path. A second process holding the
// file makes Open fail after timeout with ErrLocked, never hang.
func Open(path string, timeout time.Duration) (*Journal, error) { panic("not implemented") }

// Close releases the file.
func (j *Journal) Close() error { panic("not implemented") }

// Append writes e as the next entry, filling Seq, Time (when zero), PrevHash
// and Hash, and returns what was written.
func (j *Journal) Append(e Entry) (Entry, error) { panic("not implemented") }

// Tags returns the current tags of each message id asked for (tag minus untag).
func (j *Journal) Tags(vhost, queue string, ids []string) (map[string][]string, error) {
	panic("not implemented")
}
