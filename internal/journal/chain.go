package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// ChainError names the first entry whose place in the chain does not hold.
type ChainError struct {
	Seq    uint64
	Reason string
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("journal chain broken at entry %d: %s", e.Seq, e.Reason)
}

// seal canonicalises e, computes its hash and returns the entry as it will
// be stored together with the stored bytes. Canonical means: time in UTC,
// nil slices as empty, and Details as they read back from JSON, so that the
// hash recomputed from a stored or exported entry is the one written.
func seal(e Entry) (Entry, []byte, error) {
	e.Time = e.Time.UTC()
	if e.MessageIDs == nil {
		e.MessageIDs = []string{}
	}
	if e.Details != nil {
		raw, err := json.Marshal(e.Details)
		if err != nil {
			return Entry{}, nil, fmt.Errorf("details: %w", err)
		}
		e.Details = nil
		if err := json.Unmarshal(raw, &e.Details); err != nil {
			return Entry{}, nil, fmt.Errorf("details: %w", err)
		}
	}
	h, err := hashOf(e)
	if err != nil {
		return Entry{}, nil, err
	}
	e.Hash = h
	data, err := json.Marshal(e)
	return e, data, err
}

// hashOf is SHA-256(prev_hash || canonical JSON of e without its hash).
func hashOf(e Entry) (string, error) {
	e.Hash = ""
	e.Time = e.Time.UTC().Round(0)
	if e.MessageIDs == nil {
		e.MessageIDs = []string{}
	}
	body, err := json.Marshal(e)
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	sum.Write([]byte(e.PrevHash))
	sum.Write(body)
	return hex.EncodeToString(sum.Sum(nil)), nil
}

// VerifyChain checks sequence numbers, links and hashes of entries in order
// from entry 1 and names the first entry that does not match.
func VerifyChain(entries []Entry) error { return verifyFrom(entries, 1, "") }

// verifyFrom checks a run of entries that starts at sequence number seq and
// links to prev.
func verifyFrom(entries []Entry, seq uint64, prev string) error {
	for i, e := range entries {
		want := seq + uint64(i)
		if e.Seq != want {
			return &ChainError{Seq: e.Seq, Reason: fmt.Sprintf("sequence number %d where %d was expected (an entry was removed or inserted)", e.Seq, want)}
		}
		if e.PrevHash != prev {
			return &ChainError{Seq: e.Seq, Reason: "prev_hash does not match the hash of the entry before it"}
		}
		got, err := hashOf(e)
		if err != nil {
			return &ChainError{Seq: e.Seq, Reason: err.Error()}
		}
		if got != e.Hash {
			return &ChainError{Seq: e.Seq, Reason: "hash does not match the entry's content (it was changed after it was written)"}
		}
		prev = e.Hash
	}
	return nil
}
