package journal

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

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
}

// OpenShared creates the journal at path if needed, checks that it opens,
// and returns it closed again. timeout bounds each later wait for the lock.
func OpenShared(path string, timeout time.Duration, stamp Stamp) (*Shared, error) {
	j, err := Open(path, timeout)
	if err != nil {
		return nil, err
	}
	if err := j.Close(); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return &Shared{path: path, timeout: timeout, stamp: stamp}, nil
}

// write runs fn on the journal opened for writing, then closes it.
func (s *Shared) write(fn func(*Journal) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, err := Open(s.path, s.timeout)
	if err != nil {
		return err
	}
	err = fn(j)
	if cerr := j.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("journal %s: %w", s.path, cerr)
	}
	return err
}

// read runs fn on the journal opened read-only (a shared lock, so readers
// never wait for each other), then closes it.
func (s *Shared) read(fn func(*Journal) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, err := openReading(s.path, s.timeout)
	if err != nil {
		return err
	}
	err = fn(j)
	j.Close()
	return err
}

// openReading opens an existing journal read-only with bbolt's shared lock.
func openReading(path string, timeout time.Duration) (*Journal, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout, ReadOnly: true})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("journal %s: %w (waited %s for its lock)", path, ErrLocked, timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return &Journal{db: db, path: path}, nil
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
