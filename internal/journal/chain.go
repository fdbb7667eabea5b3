package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
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
// hash recomputed from a stored or exported entry is the one written (a
// large detail, as a plan's items, is kept as its canonical JSON:
// canonicalDetails).
func seal(e Entry) (Entry, []byte, error) {
	e.Time = e.Time.UTC()
	if e.MessageIDs == nil {
		e.MessageIDs = []string{}
	}
	if e.Details != nil {
		details, err := canonicalDetails(e.Details)
		if err != nil {
			return Entry{}, nil, fmt.Errorf("details: %w", err)
		}
		e.Details = details
	}
	body, err := hashedBody(e)
	if err != nil {
		return Entry{}, nil, err
	}
	e.Hash = hashBody(e.PrevHash, body)
	// The stored bytes are the hashed ones with the hash filled in: the
	// hash is the last field (sealedAsStored reads it there). Encoding a
	// replay's plan of 100,000 messages again would cost as much as the
	// first time.
	if !bytes.HasSuffix(body, []byte(blankHash)) {
		data, err := json.Marshal(e)
		return e, data, err
	}
	data := make([]byte, 0, len(body)+sha256.Size*2)
	data = append(data, body[:len(body)-len(blankHash)]...)
	data = append(append(append(data, `,"hash":"`...), e.Hash...), `"}`...)
	return e, data, nil
}

// blankHash is how an entry's JSON ends before its hash is known.
const blankHash = `,"hash":""}`

// hashOf is SHA-256(prev_hash || canonical JSON of e without its hash).
func hashOf(e Entry) (string, error) {
	body, err := hashedBody(e)
	if err != nil {
		return "", err
	}
	return hashBody(e.PrevHash, body), nil
}

// hashedBody is the canonical JSON of e without its hash: what its hash
// covers, after prev_hash.
func hashedBody(e Entry) ([]byte, error) {
	e.Hash = ""
	e.Time = e.Time.UTC().Round(0)
	if e.MessageIDs == nil {
		e.MessageIDs = []string{}
	}
	return json.Marshal(e)
}

func hashBody(prev string, body []byte) string {
	sum := sha256.New()
	sum.Write([]byte(prev))
	sum.Write(body)
	return hex.EncodeToString(sum.Sum(nil))
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

// sealedAsStored checks stored entry bytes the short way: an entry seal
// wrote is the canonical JSON its hash was computed over, with the hash as
// its last field, so hashing the bytes with that field blanked is the
// check, with no decoding into maps and encoding again (most of what
// opening a large journal cost). It reports false for anything else (an
// entry stored another way, or broken), which the caller checks the long
// way: that names what is wrong.
func sealedAsStored(v []byte, seq uint64, prev string) (head, bool) {
	const field = `,"hash":"`
	i := bytes.LastIndex(v, []byte(field))
	if i < 0 || len(v) != i+len(field)+sha256.Size*2+2 || !bytes.HasSuffix(v, []byte(`"}`)) {
		return head{}, false
	}
	stored := string(v[i+len(field) : len(v)-2])
	// seal writes seq first and prev_hash just before the hash; the bytes
	// are what the hash covers, so reading them in place is safe
	if !bytes.HasPrefix(v, []byte(`{"seq":`+strconv.FormatUint(seq, 10)+`,`)) ||
		!bytes.HasSuffix(v[:i], []byte(`"prev_hash":"`+prev+`"`)) {
		return head{}, false
	}
	sum := sha256.New()
	sum.Write([]byte(prev))
	sum.Write(v[:i])
	sum.Write([]byte(`,"hash":""}`))
	if hex.EncodeToString(sum.Sum(nil)) != stored {
		return head{}, false
	}
	return head{Entries: seq, Hash: stored}, true
}
