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
)

// openUnverified opens the journal for writing with only the checks that
// cost the same at ten entries or a million: the file and its meta pages
// before bbolt maps it, and the head file against the entry it names. The
// rest of what Open checks (bbolt's page check, the whole hash chain) is
// left to checkWhole: the TUI shows its first screen meanwhile.
func openUnverified(path string, timeout time.Duration) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	j, err := openFile(path, timeout, false, false)
	if err != nil {
		return nil, err
	}
	err = j.prepare()
	if err == nil {
		err = j.checkHeadQuick()
	}
	if err != nil {
		j.db.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return j, nil
}

// checkHeadQuick compares the head file with the newest entry's seq and
// the hash of the entry it names: a journal emptied, cut short or replaced
// is refused at once, without walking the chain.
func (j *Journal) checkHeadQuick() error {
	h, ok, err := readHead(j.path)
	if err != nil || !ok || h.Entries == 0 {
		return err
	}
	var n uint64
	atHead := ""
	err = guard(j.path, func() error {
		return j.db.View(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketEntries)
			if k, _ := b.Cursor().Last(); k != nil {
				n = binary.BigEndian.Uint64(k)
			}
			v := b.Get(seqKey(h.Entries))
			if v == nil {
				return nil
			}
			var e struct {
				Hash string `json:"hash"`
			}
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("entry %d is unreadable: %w", h.Entries, err)
			}
			atHead = e.Hash
			return nil
		})
	})
	if err != nil {
		return err
	}
	return checkHeadAt(j.path, n, atHead, h, ok)
}

// checkWhole is the rest of Open's check for a journal openUnverified
// opened: bbolt's check of every page, then the whole hash chain and the
// head file. It returns the head it checked up to.
func (j *Journal) checkWhole(progress func(done, total uint64)) (head, error) {
	if err := j.checkPagesAlone(); err != nil {
		return head{}, err
	}
	return j.checkChain(progress)
}

// checkPagesAlone is checkPages in a write transaction it rolls back:
// bbolt's Check reads the freelist, which a write transaction beside it
// changes (the race detector caught it), and a Shared takes index writes
// while its check runs. Writes wait for the page check (~50 ms at 100,000
// entries), not for the chain.
func (j *Journal) checkPagesAlone() error {
	return j.alone(func(tx *bolt.Tx) error { return checkTx(j.path, tx) })
}

// checkFileAlone is checkFilePages in a write transaction it rolls back,
// so nothing is written while it reads the file: the check a Shared makes
// as it appends.
func (j *Journal) checkFileAlone() error {
	return j.alone(func(*bolt.Tx) error { return checkFilePages(j.path) })
}

// alone runs check in a write transaction it rolls back, guarded.
func (j *Journal) alone(check func(*bolt.Tx) error) error {
	return guard(j.path, func() error {
		tx, err := j.db.Begin(true)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		return check(tx)
	})
}

// openReadTrusting opens the journal read-only for a process that has
// checked it whole up to entry trusted.Entries (as openTrusting does for
// writing): that entry must still have its hash, the entries after it must
// chain on, and the head file must agree. A read then costs what was
// appended since, not the size of the journal. A file another dlqt holds
// is read through a copy, as OpenReadOnly reads it.
func openReadTrusting(path string, timeout time.Duration, trusted head) (*Journal, error) {
	j, err := openFile(path, timeout, true, false)
	if errors.Is(err, ErrLocked) {
		return OpenReadOnly(path, timeout)
	}
	if err != nil {
		return nil, err
	}
	if err := j.checkChainAfter(trusted, false); err != nil {
		j.db.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return j, nil
}

// Page reads at most n entries before sequence number before (0: the
// newest), in journal order, by seeking their seq keys: the journal screen
// reads what it shows, not the journal. last is the newest entry's seq,
// which (seqs have no gaps) is how many entries the journal holds.
func (j *Journal) Page(before uint64, n int) (entries []Entry, last uint64, err error) {
	err = j.view("page", func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEntries)
		if b == nil { // a read-only open of a journal never written
			return nil
		}
		c := b.Cursor()
		k, v := c.Last()
		if k == nil {
			return nil
		}
		last = binary.BigEndian.Uint64(k)
		if before != 0 && before <= last {
			c.Seek(seqKey(before))
			k, v = c.Prev()
		}
		for ; k != nil && len(entries) < n; k, v = c.Prev() {
			var e Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("entry %d is unreadable: %w", binary.BigEndian.Uint64(k), err)
			}
			entries = append(entries, e)
		}
		return nil
	})
	slices.Reverse(entries)
	return entries, last, err
}

// VerifyRun checks a run of consecutive entries (a page) within itself:
// seqs without gaps, each linked to the one before, each hash its content's.
// That the run links to the entries before it is for the caller, which has
// them (or for the whole check).
func VerifyRun(entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	return verifyFrom(entries, entries[0].Seq, entries[0].PrevHash)
}
