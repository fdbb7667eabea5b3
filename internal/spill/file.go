package spill

import (
	"bufio"
	"fmt"
	"os"
	"sync"

	"github.com/dlqt/dlqt/internal/triage"
)

// File is a Store for one command's read: records appended to a file that
// is unlinked as soon as it is made (nothing of the messages stays on disk
// once dlqt exits, however it exits) and read back by offset with pread.
// Unlike a Store's bbolt file it is never mapped into memory, so what it
// holds costs the process no resident memory: the plan of a replay of
// 100,000 messages read them back through a Store's mapping, 220 MB of
// RSS on top of the heap. It cannot be kept or opened again.
type File struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	end  int64
	at   []span // by position: positions are taken in order, 0, 1, 2…
	werr error
}

type span struct {
	off     int64
	head, n int // the record's bytes up to its body, and in all
}

// CreateFile makes an empty File in dir ("" means Dir()), readable by its
// owner only while it exists.
func CreateFile(dir string) (*File, error) {
	if dir == "" {
		d, err := Dir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	f, err := os.CreateTemp(dir, "read-*.bin") // 0600
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("spill: %w", err)
	}
	return &File{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Put stores m; m.Position must be the number of messages put before it.
func (s *File) Put(m triage.Message) error {
	head, err := appendHead(nil, m, 0)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.f == nil:
		return ErrClosed
	case s.werr != nil:
		return s.werr
	case m.Position != len(s.at):
		return fmt.Errorf("spill: message at position %d put as the %dth", m.Position, len(s.at))
	}
	// The body goes as it is, never copied: a large one costs no second copy.
	for _, b := range [][]byte{head, m.Body} {
		if _, err := s.w.Write(b); err != nil {
			s.werr = fmt.Errorf("spill: %w", err)
			return s.werr
		}
	}
	n := len(head) + len(m.Body)
	s.at = append(s.at, span{s.end, len(head), n})
	s.end += int64(n)
	return nil
}

// Flush writes what Put buffered.
func (s *File) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return ErrClosed
	}
	if s.werr == nil {
		if err := s.w.Flush(); err != nil {
			s.werr = fmt.Errorf("spill: %w", err)
		}
	}
	return s.werr
}

// Message reads back the message stored at pos.
func (s *File) Message(pos int) (triage.Message, error) {
	return s.read(pos, false)
}

// MessageHead reads back the message stored at pos without its body
// (triage.HeadReader): its routing, properties and headers.
func (s *File) MessageHead(pos int) (triage.Message, error) {
	return s.read(pos, true)
}

func (s *File) read(pos int, headOnly bool) (triage.Message, error) {
	s.mu.Lock()
	if s.f == nil {
		s.mu.Unlock()
		return triage.Message{}, ErrClosed
	}
	if pos < 0 || pos >= len(s.at) {
		s.mu.Unlock()
		return triage.Message{}, fmt.Errorf("spill: no message at position %d", pos)
	}
	sp := s.at[pos]
	if sp.off+int64(sp.n) > s.end-int64(s.w.Buffered()) && s.werr == nil {
		if err := s.w.Flush(); err != nil {
			s.werr = fmt.Errorf("spill: %w", err)
		}
	}
	f, err := s.f, s.werr
	s.mu.Unlock()
	if err != nil {
		return triage.Message{}, err
	}
	n := sp.n
	if headOnly {
		n = sp.head
	}
	rec := make([]byte, n)
	if _, err := f.ReadAt(rec, sp.off); err != nil {
		return triage.Message{}, fmt.Errorf("spill: %w", err)
	}
	m, err := decode(rec) // rec is the message's own: its body stays where it was read
	if headOnly {
		m.Body = nil
	}
	return m, err
}

// Close closes the file, which takes its records with it. A second Close
// does nothing.
func (s *File) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f, s.at = nil, nil
	return err
}
