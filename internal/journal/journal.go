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
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

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
	Version string `json:"version,omitempty"`
	Context string `json:"context,omitempty"`
	// Supersedes names, by hash, earlier attempts at this entry's
	// sequence number that the mirror did not confirm. Each was rolled
	// back here, and its action never started, but it may be on the
	// mirror all the same: a stream's leader can die after writing an
	// entry and before confirming it. The entry that took its place
	// names it, so that a reader of the mirror sees a replaced attempt,
	// not a rewritten journal (package trail).
	Supersedes []string `json:"supersedes,omitempty"`
	PrevHash   string   `json:"prev_hash"`
	Hash       string   `json:"hash"`
}

// ErrLocked means another process holds the journal file.
var ErrLocked = errors.New("journal is in use by another dlqt")

var (
	bucketEntries = []byte("entries")
	bucketTags    = []byte("tags")
	// bucketUnsure holds, by sequence number, the hashes of attempts at
	// the next entry that the mirror did not confirm (Entry.Supersedes).
	bucketUnsure = []byte("unconfirmed-attempts")
	// bucketUnmirrored holds, under keyUnmirroredFrom, the first entry
	// written while the mirror could not take it (Deferrable), not sent
	// since.
	bucketUnmirrored  = []byte("unmirrored")
	keyUnmirroredFrom = []byte("from")
)

// Journal is an open journal file. Safe for concurrent use (bbolt
// serialises writers).
type Journal struct {
	db       *bolt.DB
	path     string
	readOnly bool
	copy     string // a read-only open of a locked journal reads this copy

	headMu  sync.Mutex
	headSeq uint64 // last head written to the head file

	// mirror, when set, must confirm every entry before it is committed.
	mirror Mirror

	// closing stops a chain check under way: Close waits for the check's
	// read transaction, and a TUI that quits must not wait for a million
	// entries.
	closing atomic.Bool
}

// errClosing ends a chain check the journal's Close stopped.
var errClosing = errors.New("the journal was closed before its check ended")

// Open opens or creates the journal at path for writing. A second process
// holding the file makes Open fail after timeout with ErrLocked, never
// hang. A journal that fails its integrity check (its meta pages, bbolt's
// page check, the hash chain, its head file) is refused with a
// DamagedError: no action may add to a log that cannot be trusted.
func Open(path string, timeout time.Duration) (*Journal, error) {
	return openTrusting(path, timeout, head{})
}

// openTrusting is Open for a process that has already checked this journal
// whole up to entry trusted.Entries (a Shared, which opens the file for every
// append): it checks that this entry still has the hash it had, then the
// pages and the chain only after it, so an append costs the same in a
// journal of ten entries or a million. A file replaced or rewritten behind
// the trusted entry is still refused; an older entry changed in place is
// found by the next full check (verify, or the next dlqt to open the file).
func openTrusting(path string, timeout time.Duration, trusted head) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	j, err := openFile(path, timeout, false, trusted.Entries == 0)
	if err != nil {
		return nil, err
	}
	err = j.prepare()
	if err == nil {
		if trusted.Entries == 0 {
			_, err = j.checkChain(nil)
		} else {
			err = j.checkChainAfter(trusted, true)
		}
	}
	if err != nil {
		j.db.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return j, nil
}

// prepare creates the buckets a journal opened for writing needs and
// brings its index up to date.
func (j *Journal) prepare() error {
	return guard(j.path, func() error {
		return j.db.Update(func(tx *bolt.Tx) error {
			for _, b := range [][]byte{bucketEntries, bucketTags} {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			return catchUpIndex(tx) // a journal from before the index, or one that lags
		})
	})
}

// checkChainAfter verifies the entries after the trusted one, and that the
// trusted one is still there with its hash.
// A read-only open (note false) leaves a lagging head file as it is.
//
// Each entry is checked in its stored bytes (sealedAsStored), as the whole
// chain's check does, and decoded only when they are not as seal writes
// them: a shared journal is opened again for every record of a replay, and
// the trusted entry was often the replay's own plan, decoded at each open
// (a plan of 1,000,000 messages: 750 MB of maps, each time).
func (j *Journal) checkChainAfter(trusted head, note bool) error {
	h, ok, err := readHead(j.path)
	if err != nil {
		return err
	}
	var last head
	found, atHead := false, ""
	var chainErr error
	err = guard(j.path, func() error {
		return j.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketEntries).Cursor()
			var from [8]byte
			binary.BigEndian.PutUint64(from[:], trusted.Entries)
			k, v := c.Seek(from[:])
			if k == nil || binary.BigEndian.Uint64(k) != trusted.Entries {
				return nil
			}
			first, err := chainOf(v)
			if err != nil {
				return fmt.Errorf("entry %d is unreadable: %w", trusted.Entries, err)
			}
			if first.Entries != trusted.Entries || first.Hash != trusted.Hash {
				return nil
			}
			found, last = true, first
			for k, v = c.Next(); k != nil; k, v = c.Next() {
				e, fast := sealedAsStored(v, last.Entries+1, last.Hash)
				if !fast { // not as seal writes it, or broken: check it the long way, which names why
					var full Entry
					if err := json.Unmarshal(v, &full); err != nil {
						return fmt.Errorf("entry %d is unreadable: %w", binary.BigEndian.Uint64(k), err)
					}
					if chainErr = verifyFrom([]Entry{full}, last.Entries+1, last.Hash); chainErr != nil {
						return errStop
					}
					e = head{Entries: full.Seq, Hash: full.Hash}
				}
				last = e
				if ok && e.Entries == h.Entries {
					atHead = e.Hash
				}
			}
			return nil
		})
	})
	if chainErr != nil {
		return damaged(j.path, "%v", chainErr)
	}
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if !found {
		return damaged(j.path, "its entry %d is not the one this dlqt saw (the file was replaced or rewritten)", trusted.Entries)
	}
	if ok && h.Entries == trusted.Entries {
		atHead = trusted.Hash
	}
	switch {
	case !ok || h.Entries < trusted.Entries:
	case h.Entries > last.Entries:
		return damaged(j.path, "it holds %d entries but %d were written to it (head file %s): entries were removed or the file was replaced", last.Entries, h.Entries, headPath(j.path))
	case atHead != h.Hash:
		return damaged(j.path, "its entry %d is not the one written (head file %s records another hash): the file was replaced", h.Entries, headPath(j.path))
	}
	if note && (!ok || h.Entries < last.Entries) {
		j.noteHead(Entry{Seq: last.Entries, Hash: last.Hash})
	}
	return nil
}

// last is the newest entry's sequence number and hash (zero when empty).
func (j *Journal) last() (head, error) {
	var h head
	err := guard(j.path, func() error {
		return j.db.View(func(tx *bolt.Tx) error {
			k, v := tx.Bucket(bucketEntries).Cursor().Last()
			if k == nil {
				return nil
			}
			var err error
			if h, err = chainOf(v); err != nil {
				return fmt.Errorf("entry %d is unreadable: %w", binary.BigEndian.Uint64(k), err)
			}
			return nil
		})
	})
	return h, err
}

// OpenReadOnly opens an existing journal for reading only (verify,
// export): it works on a read-only file and takes only a shared lock. It
// checks the file and its pages but leaves the hash chain to Verify, which
// names the first broken entry.
func OpenReadOnly(path string, timeout time.Duration) (*Journal, error) {
	if _, err := os.Stat(path); err != nil {
		if h, ok, herr := readHead(path); herr == nil {
			if derr := checkEmpty(path, h, ok, "missing"); derr != nil {
				return nil, derr
			}
		}
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	j, err := openFile(path, timeout, true, true)
	if errors.Is(err, ErrLocked) {
		return openCopy(path, err)
	}
	if err != nil {
		return nil, err
	}
	h, ok, err := readHead(path)
	if err == nil {
		err = j.matchHead(h, ok)
	}
	if err != nil {
		j.db.Close()
		return nil, err
	}
	return j, nil
}

// matchHead compares the file's entries with its head.
func (j *Journal) matchHead(h head, ok bool) error {
	es, err := j.Entries()
	if err != nil {
		return err
	}
	return checkHead(j.path, es, h, ok)
}

// openCopy reads a journal a running dlqt holds (its lock is exclusive)
// through a copy of the file. A copy taken mid-write may not check out:
// it is taken again a few times before the lock is reported instead.
func openCopy(path string, locked error) (*Journal, error) {
	for range 3 {
		h, ok, err := readHead(path) // before the copy: the head never runs ahead of the file
		if err != nil {
			return nil, err
		}
		tmp, err := copyToTemp(path)
		if err != nil {
			return nil, locked
		}
		j, err := openFile(tmp, time.Second, true, true)
		if err == nil {
			j.path, j.copy = path, tmp
			if err = j.matchHead(h, ok); err == nil {
				return j, nil
			}
			j.db.Close()
		}
		os.Remove(tmp)
		time.Sleep(100 * time.Millisecond)
	}
	return nil, locked
}

func copyToTemp(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "dlqt-journal-*.db")
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// openFile checks the file before bbolt maps it, opens it and runs bbolt's
// page check; a panic inside bbolt becomes a DamagedError.
func openFile(path string, timeout time.Duration, readOnly, checkAllPages bool) (*Journal, error) {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	h, hasHead, err := readHead(path)
	if err != nil {
		return nil, err
	}
	size, err := checkFile(path)
	if err != nil {
		return nil, err
	}
	switch size {
	case -1:
		err = checkEmpty(path, h, hasHead, "missing")
	case 0:
		err = checkEmpty(path, h, hasHead, "empty")
	}
	if err != nil {
		return nil, err
	}
	var db *bolt.DB
	err = guard(path, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout, ReadOnly: readOnly})
		return err
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("journal %s: %w (waited %s for its lock; close the other dlqt or pass --journal)", path, ErrLocked, timeout)
	}
	var de *DamagedError
	if errors.As(err, &de) {
		return nil, err
	}
	if err != nil {
		if size > 0 { // bbolt refused a file it found invalid
			return nil, damaged(path, "%v", err)
		}
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if checkAllPages {
		if err := checkPages(path, db); err != nil {
			db.Close()
			return nil, err
		}
	}
	return &Journal{db: db, path: path, readOnly: readOnly}, nil
}

// checkChain verifies the whole hash chain and the head file, and brings a
// head file that lags (or is missing, for a journal from before it) up to
// date; it returns the head it checked up to. It walks the entries one at a
// time: a journal of a million entries is checked without being held.
// progress (nil: none) hears how many entries are checked of how many, every
// progressEvery entries and at the end.
func (j *Journal) checkChain(progress func(done, total uint64)) (head, error) {
	h, ok, err := readHead(j.path)
	if err != nil {
		return head{}, err
	}
	var n uint64
	var last head
	atHead := ""
	var chainErr error
	err = guard(j.path, func() error {
		return j.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketEntries).Cursor()
			var total uint64
			if k, _ := c.Last(); k != nil {
				total = binary.BigEndian.Uint64(k)
			}
			for k, v := c.First(); k != nil; k, v = c.Next() {
				e, fast := sealedAsStored(v, n+1, last.Hash)
				if !fast { // not as seal writes it, or broken: check it the long way, which names why
					var full Entry
					if err := json.Unmarshal(v, &full); err != nil {
						return fmt.Errorf("entry %d is unreadable: %w", binary.BigEndian.Uint64(k), err)
					}
					if chainErr = verifyFrom([]Entry{full}, n+1, last.Hash); chainErr != nil {
						return errStop
					}
					e = head{Entries: full.Seq, Hash: full.Hash}
				}
				n, last = n+1, e
				if ok && e.Entries == h.Entries {
					atHead = e.Hash
				}
				if n%progressEvery == 0 {
					if j.closing.Load() {
						return errClosing
					}
					if progress != nil {
						progress(n, max(total, n))
					}
				}
			}
			if progress != nil {
				progress(n, n)
			}
			return nil
		})
	})
	if chainErr != nil {
		return head{}, damaged(j.path, "%v", chainErr)
	}
	if err != nil {
		return head{}, fmt.Errorf("journal %s: %w", j.path, err)
	}
	if err := checkHeadAt(j.path, n, atHead, h, ok); err != nil {
		return head{}, err
	}
	if n > 0 && (!ok || h.Entries < n) {
		j.noteHead(Entry{Seq: last.Entries, Hash: last.Hash})
	}
	return last, nil
}

// progressEvery is how often the chain check reports: often enough for a
// status line, rarely enough to cost nothing.
const progressEvery = 2000

// noteHead records e as the chain's head in the head file. A failed write
// is not an append failure: the entry is in the journal, and the next Open
// brings a lagging head up to date.
func (j *Journal) noteHead(e Entry) {
	j.headMu.Lock()
	defer j.headMu.Unlock()
	if e.Seq <= j.headSeq {
		return
	}
	if writeHead(j.path, head{Entries: e.Seq, Hash: e.Hash}) == nil {
		j.headSeq = e.Seq
	}
}

// Path is the file the journal lives in.
func (j *Journal) Path() string { return j.path }

// Close releases the file (and removes the copy a read-only open made).
func (j *Journal) Close() error {
	j.closing.Store(true)
	err := j.db.Close()
	if j.copy != "" {
		os.Remove(j.copy)
	}
	return err
}

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
	var unsure Entry // an attempt the mirror may hold without having confirmed it
	err := guard(j.path, func() error {
		return j.db.Update(func(tx *bolt.Tx) (err error) {
			if e, err = appendTx(tx, e); err != nil || j.mirror == nil {
				return err
			}
			// Inside the transaction: the file stays locked, so the
			// mirror sees this journal's entries in their order, and an
			// entry it did not confirm is rolled back, never written.
			var sent bool
			if sent, err = j.mirrorTx(tx, e); err != nil && sent && !errors.Is(err, ErrNotSent) {
				unsure = e
			}
			return err
		})
	})
	if err != nil {
		if unsure.Hash != "" {
			if uerr := j.noteUnsure(unsure); uerr != nil {
				err = fmt.Errorf("%w; and the attempt could not be noted for the next entry to name (%v): if the mirror holds it, its chain will show a fork", err, uerr)
			}
		}
		return Entry{}, fmt.Errorf("journal %s: append %s: %w", j.path, e.Action, err)
	}
	j.noteHead(e)
	return e, nil
}

// A Mirror is a second copy of the trail somewhere else (the team's
// audit stream, package trail). Append hands it each entry as sealed,
// before the entry is committed: an entry the mirror did not confirm is
// not written, and the action it records does not start. An error that
// wraps ErrNotSent says the entry never left this process; any other may
// have reached the mirror unconfirmed, and the next entry names it
// (Entry.Supersedes).
type Mirror interface {
	Mirror(e Entry) error
}

// mirrorTx hands the mirror the entries written while it could not take
// them, in order, then e, and says whether e was sent. When the mirror
// fails, e is rolled back (the error) unless it is Deferrable: then it is
// written, and sent, with any before it, ahead of the next entry.
func (j *Journal) mirrorTx(tx *bolt.Tx, e Entry) (sent bool, err error) {
	b, err := tx.CreateBucketIfNotExists(bucketUnmirrored)
	if err != nil {
		return false, err
	}
	from := uint64(0)
	if v := b.Get(keyUnmirroredFrom); len(v) == 8 {
		from = binary.BigEndian.Uint64(v)
	}
	err = func() error {
		if from != 0 {
			entries := tx.Bucket(bucketEntries)
			for seq := from; seq < e.Seq; seq++ {
				var earlier Entry
				if err := json.Unmarshal(entries.Get(seqKey(seq)), &earlier); err != nil {
					return fmt.Errorf("entry %d, written while the trail was offline, is unreadable: %w", seq, err)
				}
				if err := j.mirror.Mirror(earlier); err != nil {
					return fmt.Errorf("entry %d, written while the trail was offline, is still not on it: %w", seq, err)
				}
			}
		}
		sent = true
		return j.mirror.Mirror(e)
	}()
	switch {
	case err == nil:
		return true, b.Delete(keyUnmirroredFrom)
	case !Deferrable(e):
		return sent, err
	case from == 0:
		return sent, b.Put(keyUnmirroredFrom, seqKey(e.Seq))
	}
	return sent, nil
}

// Deferrable says whether e may be written while the mirror cannot take
// it, to be sent before the next entry: a session's start or end records
// who connected, and decides nothing, so that a responder may still read
// (under dlqt serve) while the team's trail is offline. Every other entry
// is a decision or an action, and waits for the mirror.
func Deferrable(e Entry) bool {
	return e.Action == triage.ActionSessionStart || e.Action == triage.ActionSessionEnd
}

// Unmirrored is the first entry written while the mirror could not take
// it and not sent to it since (0: none).
func (j *Journal) Unmirrored() (uint64, error) {
	var from uint64
	err := guard(j.path, func() error {
		return j.db.View(func(tx *bolt.Tx) error {
			if b := tx.Bucket(bucketUnmirrored); b != nil {
				if v := b.Get(keyUnmirroredFrom); len(v) == 8 {
					from = binary.BigEndian.Uint64(v)
				}
			}
			return nil
		})
	})
	return from, err
}

// ErrNotSent is wrapped by a Mirror's error when the entry was never sent
// (the mirror could not be reached at all).
var ErrNotSent = errors.New("the entry was not sent")

// maxUnsure bounds the attempts one entry names: the first is kept (the
// one a dying leader most likely wrote), then the latest.
const maxUnsure = 64

// noteUnsure keeps the hash of an attempt the mirror did not confirm for
// the entry that will take its sequence number.
func (j *Journal) noteUnsure(e Entry) error {
	return guard(j.path, func() error {
		return j.db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketUnsure)
			if err != nil {
				return err
			}
			var hashes []string
			if v := b.Get(seqKey(e.Seq)); v != nil {
				if err := json.Unmarshal(v, &hashes); err != nil {
					hashes = nil // unreadable: start again, this attempt at least
				}
			}
			if slices.Contains(hashes, e.Hash) {
				return nil
			}
			hashes = append(hashes, e.Hash)
			if len(hashes) > maxUnsure {
				hashes = append(hashes[:1], hashes[len(hashes)-maxUnsure+1:]...)
			}
			v, err := json.Marshal(hashes)
			if err != nil {
				return err
			}
			return b.Put(seqKey(e.Seq), v)
		})
	})
}

// appendTx chains and writes e in tx, with its tags and its index.
func appendTx(tx *bolt.Tx, e Entry) (Entry, error) {
	b := tx.Bucket(bucketEntries)
	e.Seq, e.PrevHash = 1, ""
	if k, v := b.Cursor().Last(); k != nil {
		last, err := chainOf(v)
		if err != nil {
			return e, fmt.Errorf("last entry is unreadable: %w", err)
		}
		e.Seq, e.PrevHash = last.Entries+1, last.Hash
	}
	unsure := tx.Bucket(bucketUnsure)
	if unsure != nil {
		if v := unsure.Get(seqKey(e.Seq)); v != nil {
			// unreadable (noteUnsure writes none such): the entry names
			// nothing, and a reader of the mirror sees the fork
			_ = json.Unmarshal(v, &e.Supersedes)
		}
	}
	sealed, data, err := seal(e)
	if err != nil {
		return e, err
	}
	e = sealed
	if err := b.Put(seqKey(e.Seq), data); err != nil {
		return e, err
	}
	if unsure != nil {
		if err := unsure.Delete(seqKey(e.Seq)); err != nil {
			return e, err
		}
	}
	if err := catchUpIndex(tx); err != nil { // indexes e too, in this transaction
		return e, err
	}
	return e, applyTags(tx.Bucket(bucketTags), e)
}

// chainOf reads a stored entry's sequence number and hash and nothing
// else: the entry before an append may be a replay's plan of 100,000
// messages, megabytes of JSON that decoded whole is a map per message.
func chainOf(v []byte) (head, error) {
	var e struct {
		Seq  uint64 `json:"seq"`
		Hash string `json:"hash"`
	}
	err := json.Unmarshal(v, &e)
	return head{Entries: e.Seq, Hash: e.Hash}, err
}

// Entries returns every entry in order.
func (j *Journal) Entries() ([]Entry, error) {
	var out []Entry
	err := guard(j.path, func() error {
		return j.db.View(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketEntries)
			if b == nil { // a read-only open of a journal never written
				return nil
			}
			return b.ForEach(func(k, v []byte) error {
				var e Entry
				if err := json.Unmarshal(v, &e); err != nil {
					return fmt.Errorf("entry %d is unreadable: %w", binary.BigEndian.Uint64(k), err)
				}
				out = append(out, e)
				return nil
			})
		})
	})
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", j.path, err)
	}
	return out, nil
}

// Records reads every entry back as the record it was written from, in
// order: what the use cases rebuild their state from (a replay's resume).
func (j *Journal) Records() ([]triage.Recorded, error) { return j.RecordsOf(nil) }

// RecordsOf is Records of the entries whose action keep takes (nil: all).
// The others are passed over without being decoded: a replay's plan of
// 100,000 messages is megabytes of JSON, and decoded it is a map per
// message. A replay that read every record to find the approved edits of
// its queue peaked at 468 MiB of RSS with four such plans in the journal
// (against about 250 MiB with none).
func (j *Journal) RecordsOf(keep func(triage.Action) bool) ([]triage.Recorded, error) {
	var out []triage.Recorded
	err := guard(j.path, func() error {
		return j.db.View(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketEntries)
			if b == nil { // a read-only open of a journal never written
				return nil
			}
			return b.ForEach(func(k, v []byte) error {
				if keep != nil && !keep(triage.Action(gjson.GetBytes(v, "action").String())) {
					return nil
				}
				var e Entry
				if err := json.Unmarshal(v, &e); err != nil {
					return fmt.Errorf("entry %d is unreadable: %w", binary.BigEndian.Uint64(k), err)
				}
				out = append(out, recorded(e))
				return nil
			})
		})
	})
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", j.path, err)
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
	err := guard(j.path, func() error {
		return j.db.View(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketTags)
			if b == nil {
				return nil
			}
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
