package journal

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// Stamp is what every entry a process writes carries about the process:
// the dlqt build that acted and the named broker context it acted on.
type Stamp struct {
	Version string
	Context string
}

// Shared is a journal file held only for the moment of each read or write.
// bbolt's lock is a flock on the whole file for as long as it is open, so a
// TUI that kept its journal open all session made `dlqt journal export` and
// `verify` in another terminal fail with ErrLocked. A Shared opens, works
// and closes each time: another dlqt waits at most one append for the lock.
// Every entry it appends carries its Stamp.
type Shared struct {
	path    string
	timeout time.Duration
	stamp   Stamp
	mu      sync.Mutex // flock does not serialise the opens of one process
	trusted head       // checked whole up to here: later opens check what follows

	mirror   Mirror      // see SetMirror
	held     *Journal    // open for writing, for at most holdFor
	released *time.Timer // closes held

	// unverified: opened by OpenSharedUnverified and its whole check
	// (Verify) not passed yet, so nothing is appended; held stays open
	// until it ends. failed is why the check refused the journal.
	unverified bool
	failed     error

	// pagesCheckedAt is when bbolt's check of every page last passed on
	// this file, and pageCheckCost what it took (see checkPagesDue).
	pagesCheckedAt time.Time
	pageCheckCost  time.Duration
}

// A Shared that appends checks the file as it goes, so a page overwritten
// during a replay stops the replay's journaling instead of going unnoticed
// until the next full check. Each write re-reads the meta pages and the
// file's size (microseconds: checkFile); bbolt's check of every page costs
// what the journal weighs (about 45 ms at 100,000 entries), so it runs
// again only once pageCheckShare times its last cost has passed, and not
// more often than every pageCheckEvery: at most about 5% of the time.
const (
	pageCheckShare = 20
	pageCheckEvery = 100 * time.Millisecond
)

// ErrUnverified is an append to a journal whose hash chain is still being
// checked: an action waits for the check rather than add to a log that may
// not be trusted.
var ErrUnverified = errors.New("its hash chain is still being checked, and nothing is written to it before that passed")

// holdFor is how long a Shared keeps the file once it opened it to write:
// a replay journals every message, and opening per entry (about 2 ms)
// slowed a 200 msg/s replay to 179 msg/s; another dlqt waits at most this
// long (plus one append) for the lock.
const holdFor = 200 * time.Millisecond

// OpenShared creates the journal at path if needed, checks that it opens,
// and returns it closed again. timeout bounds each later wait for the lock.
func OpenShared(path string, timeout time.Duration, stamp Stamp) (*Shared, error) {
	j, err := Open(path, timeout)
	if err != nil {
		return nil, err
	}
	trusted, err := j.last()
	if cerr := j.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return &Shared{path: path, timeout: timeout, stamp: stamp, trusted: trusted, pagesCheckedAt: time.Now()}, nil
}

// OpenSharedUnverified is OpenShared for the TUI's start, which must not
// wait for a check whose cost grows with the journal: it opens the file
// with the checks that cost the same at any size (its meta pages, its head
// file against the entry that head names) and keeps it open for Verify,
// which checks the rest. Until Verify passed, reads work and Append
// refuses with ErrUnverified; a journal Verify refuses stays refused.
func OpenSharedUnverified(path string, timeout time.Duration, stamp Stamp) (*Shared, error) {
	j, err := openUnverified(path, timeout)
	if err != nil {
		return nil, err
	}
	return &Shared{path: path, timeout: timeout, stamp: stamp, held: j, unverified: true}, nil
}

// Verified reports whether the whole journal passed its check: always for
// OpenShared, after Verify for OpenSharedUnverified.
func (s *Shared) Verified() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.unverified && s.failed == nil
}

// Verify runs the check OpenSharedUnverified left: bbolt's page check, the
// whole hash chain and the head file, reporting how many entries are
// checked of how many to progress (nil: none). It does not hold the
// Shared's lock meanwhile, so reads go on; appends wait for it to pass. A
// journal it refuses (a DamagedError, or a Close that stopped it) is
// closed, and every later Verify and Append returns the same error.
func (s *Shared) Verify(progress func(done, total uint64)) error {
	s.mu.Lock()
	j, pending, failed := s.held, s.unverified, s.failed
	s.mu.Unlock()
	if !pending || failed != nil {
		return failed
	}
	var checked head
	err := errClosing
	if j != nil {
		checked, err = j.checkWhole(progress)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failed = err
		s.closeHeld()
		return err
	}
	s.unverified, s.trusted, s.pagesCheckedAt = false, checked, time.Now()
	if s.held != nil { // from now on held only as long as any write holds it
		s.released = time.AfterFunc(holdFor, s.release)
	}
	return nil
}

// appendable says why nothing may be appended yet, nil when it may.
func (s *Shared) appendable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.failed != nil:
		return s.failed
	case s.unverified:
		return fmt.Errorf("journal %s: %w", s.path, ErrUnverified)
	}
	return nil
}

// write runs fn on the journal opened for writing; the file stays open
// for up to holdFor, so a burst of appends pays for one open.
func (s *Shared) write(fn func(*Journal) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	if s.held == nil {
		j, err := openTrusting(s.path, s.timeout, s.trusted)
		if err != nil {
			return err
		}
		j.mirror = s.mirror
		s.held = j
		s.released = time.AfterFunc(holdFor, s.release)
	}
	if err := s.checkPagesDue(); err != nil {
		return err
	}
	err := fn(s.held)
	if s.unverified { // nothing was appended, and what is there is not checked yet
		return err
	}
	if last, lerr := s.held.last(); lerr == nil {
		s.trusted = last
	}
	return err
}

// checkPagesDue checks the held file before a write: its meta pages and
// size every time, every page when that is due (checkFilePages: read, not
// mapped, so the check does not bring the whole file into RSS). A failed check refuses
// this write and every later one, as a failed Verify does.
func (s *Shared) checkPagesDue() error {
	if s.unverified {
		return nil // Verify checks it whole; nothing is appended before
	}
	_, err := checkFile(s.path)
	if err == nil && time.Since(s.pagesCheckedAt) >= max(pageCheckEvery, pageCheckShare*s.pageCheckCost) {
		start := time.Now()
		err = s.held.checkFileAlone()
		s.pagesCheckedAt, s.pageCheckCost = time.Now(), time.Since(start)
	}
	if err != nil {
		s.failed = err
		s.closeHeld()
	}
	return err
}

// release closes the held file, so another dlqt can take the lock.
func (s *Shared) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeHeld()
}

func (s *Shared) closeHeld() error {
	if s.released != nil {
		s.released.Stop()
		s.released = nil
	}
	if s.held == nil {
		return nil
	}
	err := s.held.Close()
	s.held = nil
	return err
}

// read runs fn on the journal opened read-only (a shared lock, so readers
// never wait for each other), then closes it; on the held file while this
// process holds it.
func (s *Shared) read(fn func(*Journal) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil {
		return fn(s.held)
	}
	open := OpenReadOnly
	if s.trusted.Entries > 0 { // checked whole up to there: check only what follows
		open = func(path string, timeout time.Duration) (*Journal, error) {
			return openReadTrusting(path, timeout, s.trusted)
		}
	}
	j, err := open(s.path, s.timeout)
	if err != nil {
		return err
	}
	err = fn(j)
	j.Close()
	return err
}

// Path is the file the journal lives in.
func (s *Shared) Path() string { return s.path }

// SetMirror makes every later append of j wait for m to confirm its
// entry; set it before j is shared.
func (j *Journal) SetMirror(m Mirror) { j.mirror = m }

// SetMirror makes every later append wait for m to confirm its entry
// (Mirror); nil stops mirroring.
func (s *Shared) SetMirror(m Mirror) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mirror = m
	if s.held != nil {
		s.held.mirror = m
	}
}

// HashOf is the hash e's content and prev_hash give ("" when e does not
// encode). It is no secret: anyone can chain an entry; only a signature
// (trail, checkpoints) says who wrote it.
func HashOf(e Entry) string {
	h, _ := hashOf(e)
	return h
}

// RecordOf is e as the triage layer reads the journal's records.
func RecordOf(e Entry) triage.Recorded { return recorded(e) }

// CheckHash says whether e's hash is the one its content and prev_hash
// give (an entry read back from elsewhere, as the audit stream).
func CheckHash(e Entry) bool {
	h, err := hashOf(e)
	return err == nil && h == e.Hash
}

// Append stamps e and writes it as the next entry (see Journal.Append).
func (s *Shared) Append(e Entry) (Entry, error) {
	if e.Version == "" {
		e.Version = s.stamp.Version
	}
	if e.Context == "" {
		e.Context = s.stamp.Context
	}
	if err := s.appendable(); err != nil {
		return Entry{}, err
	}
	var out Entry
	err := s.write(func(j *Journal) (err error) {
		out, err = j.Append(e)
		return err
	})
	return out, err
}

// Entries returns every entry in order.
func (s *Shared) Entries() (es []Entry, err error) {
	err = s.read(func(j *Journal) error {
		es, err = j.Entries()
		return err
	})
	return es, err
}

// Unmirrored is the first entry written while the mirror could not take
// it and not sent since (0: none; see Journal.Unmirrored).
func (s *Shared) Unmirrored() (from uint64, err error) {
	err = s.read(func(j *Journal) error {
		from, err = j.Unmirrored()
		return err
	})
	return from, err
}

// Page reads at most n entries before seq before (0: the newest) and the
// newest seq (see Journal.Page).
func (s *Shared) Page(before uint64, n int) (es []Entry, last uint64, err error) {
	err = s.read(func(j *Journal) error {
		es, last, err = j.Page(before, n)
		return err
	})
	return es, last, err
}

// Records reads every entry back as the record it was written from.
func (s *Shared) Records() ([]triage.Recorded, error) { return s.RecordsOf(nil) }

// RecordsOf is Records of the entries whose action keep takes (see
// Journal.RecordsOf).
func (s *Shared) RecordsOf(keep func(triage.Action) bool) (rs []triage.Recorded, err error) {
	err = s.read(func(j *Journal) error {
		rs, err = j.RecordsOf(keep)
		return err
	})
	return rs, err
}

// OpenReplays are the replays started and never finished, through the
// index (see Journal.OpenReplays).
func (s *Shared) OpenReplays() (ids []string, err error) {
	err = s.read(func(j *Journal) error {
		ids, err = j.OpenReplays()
		return err
	})
	return ids, err
}

// ReplayRecords are the records of one replay (see Journal.ReplayRecords).
func (s *Shared) ReplayRecords(id string) (rs []triage.Recorded, err error) {
	err = s.read(func(j *Journal) error {
		rs, err = j.ReplayRecords(id)
		return err
	})
	return rs, err
}

// QueueHistory is what was done to one queue, newest first (see
// Journal.QueueHistory).
func (s *Shared) QueueHistory(vhost, queue string, limit int) (es []Entry, err error) {
	err = s.read(func(j *Journal) error {
		es, err = j.QueueHistory(vhost, queue, limit)
		return err
	})
	return es, err
}

// Tags returns the current tags of each message id asked for.
func (s *Shared) Tags(vhost, queue string, ids []string) (tags map[string][]string, err error) {
	err = s.read(func(j *Journal) error {
		tags, err = j.Tags(vhost, queue, ids)
		return err
	})
	return tags, err
}

// Export writes the entries made at or after since to w (see
// Journal.Export); it leaves the journal unchanged.
func (s *Shared) Export(w io.Writer, format string, since time.Time) (n int, err error) {
	err = s.read(func(j *Journal) error {
		n, err = j.Export(w, format, since)
		return err
	})
	return n, err
}

// Discarded looks ids up in the discard index (see Journal.Discarded); it
// brings the index up to date, so it opens the journal for writing.
func (s *Shared) Discarded(vhost, queue string, ids []string) (found map[string]uint64, err error) {
	err = s.write(func(j *Journal) error {
		found, err = j.Discarded(vhost, queue, ids)
		return err
	})
	return found, err
}

// DiscardsInterrupted looks ids up in the interrupted-discard index (see
// Journal.DiscardsInterrupted); like Discarded it opens for writing.
func (s *Shared) DiscardsInterrupted(vhost, queue string, ids []string) (found map[string]uint64, err error) {
	err = s.write(func(j *Journal) error {
		found, err = j.DiscardsInterrupted(vhost, queue, ids)
		return err
	})
	return found, err
}

// Close releases the file if this process still holds it.
func (s *Shared) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeHeld()
}
