package spill

import (
	"fmt"

	"github.com/dlqt/dlqt/internal/triage"
)

// File is a Store for one command's read, on Records: the plan of a
// replay or discard keeps its messages there and an index entry in
// memory. Reading 100,000 messages back through a Store's mapped bbolt
// file added 220 MB of RSS on top of the heap; a File adds none. It cannot
// be kept or opened again.
type File struct{ r *Records }

// CreateFile makes an empty File in dir ("" means Dir()).
func CreateFile(dir string) (*File, error) {
	r, err := CreateRecords(dir, "read-*.bin")
	if err != nil {
		return nil, err
	}
	return &File{r: r}, nil
}

// Put stores m; m.Position must be the number of messages put before it.
func (s *File) Put(m triage.Message) error {
	if n := s.r.Len(); m.Position != n {
		return fmt.Errorf("spill: message at position %d put as number %d", m.Position, n)
	}
	head, err := appendHead(nil, m, 0)
	if err != nil {
		return err
	}
	_, err = s.r.Append(head, m.Body)
	return err
}

// Flush writes what Put buffered.
func (s *File) Flush() error { return s.r.Flush() }

// Message reads back the message stored at pos.
func (s *File) Message(pos int) (triage.Message, error) {
	rec, err := s.r.Read(pos, false)
	if err != nil {
		return triage.Message{}, err
	}
	return decode(rec) // rec is the message's own: its body stays where it was read
}

// MessageHead reads back the message stored at pos without its body
// (triage.HeadReader): its routing, properties and headers.
func (s *File) MessageHead(pos int) (triage.Message, error) {
	rec, err := s.r.Read(pos, true)
	if err != nil {
		return triage.Message{}, err
	}
	m, err := decode(rec)
	m.Body = nil
	return m, err
}

// Close closes the file, which takes its messages with it.
func (s *File) Close() error { return s.r.Close() }
