package journal

import (
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

	held     *Journal    // open for writing, for at most holdFor
	released *time.Timer // closes held
}

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
	return &Shared{path: path, timeout: timeout, stamp: stamp, trusted: trusted}, nil
}

// write runs fn on the journal opened for writing; the file stays open
// for up to holdFor, so a burst of appends pays for one open.
func (s *Shared) write(fn func(*Journal) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		j, err := openTrusting(s.path, s.timeout, s.trusted)
		if err != nil {
			return err
		}
		s.held = j
		s.released = time.AfterFunc(holdFor, s.release)
	}
	err := fn(s.held)
	if last, lerr := s.held.last(); lerr == nil {
		s.trusted = last
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
	j, err := OpenReadOnly(s.path, s.timeout)
	if err != nil {
		return err
	}
	err = fn(j)
	j.Close()
	return err
}

// Path is the file the journal lives in.
func (s *Shared) Path() string { return s.path }

// Append stamps e and writes it as the next entry (see Journal.Append).
func (s *Shared) Append(e Entry) (Entry, error) {
	if e.Version == "" {
		e.Version = s.stamp.Version
	}
	if e.Context == "" {
		e.Context = s.stamp.Context
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

// Records reads every entry back as the record it was written from.
func (s *Shared) Records() (rs []triage.Recorded, err error) {
	err = s.read(func(j *Journal) error {
		rs, err = j.Records()
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
