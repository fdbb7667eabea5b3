package spill

import (
	"bufio"
	"fmt"
	"os"
	"sync"
)

// Records is an append-only file of records, read back by number with
// pread. The file is unlinked as soon as it is made (mode 0600 while it
// has a name): what it holds, messages as they are, secrets included,
// leaves nothing on disk once dlqt exits, however it exits. Unlike a
// Store's bbolt file it is never mapped into memory, so what it holds
// costs the process no resident memory. It is safe for concurrent use.
type Records struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	end  int64 // bytes appended, buffered ones included
	at   []span
	werr error // the first write error: every later call returns it
}

type span struct {
	off     int64
	head, n int // the record's first part, and its whole length
}

// CreateRecords makes an empty Records in dir ("" means Dir()), its file
// named after pattern (os.CreateTemp) for the moment it has a name.
func CreateRecords(dir, pattern string) (*Records, error) {
	f, err := createIn(dir, pattern) // 0600
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("spill: %w", err)
	}
	return &Records{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Len is how many records were appended.
func (r *Records) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.at)
}

// Append writes head and body, one after the other, as the next record and
// returns its number. Neither is copied: a large body goes to the file as
// it is.
func (r *Records) Append(head, body []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, ErrClosed
	}
	if r.werr != nil {
		return 0, r.werr
	}
	for _, b := range [][]byte{head, body} {
		if _, err := r.w.Write(b); err != nil {
			r.werr = fmt.Errorf("spill: %w", err)
			return 0, r.werr
		}
	}
	n := len(head) + len(body)
	r.at = append(r.at, span{r.end, len(head), n})
	r.end += int64(n)
	return len(r.at) - 1, nil
}

// Flush writes what Append buffered.
func (r *Records) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return ErrClosed
	}
	if r.werr == nil {
		if err := r.w.Flush(); err != nil {
			r.werr = fmt.Errorf("spill: %w", err)
		}
	}
	return r.werr
}

// Read reads record i back, or only its head; the bytes are the caller's.
func (r *Records) Read(i int, headOnly bool) ([]byte, error) {
	r.mu.Lock()
	if r.f == nil {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	if i < 0 || i >= len(r.at) {
		r.mu.Unlock()
		return nil, fmt.Errorf("spill: no record %d", i)
	}
	sp := r.at[i]
	if r.werr == nil && sp.off+int64(sp.n) > r.end-int64(r.w.Buffered()) { // still in the buffer
		if err := r.w.Flush(); err != nil {
			r.werr = fmt.Errorf("spill: %w", err)
		}
	}
	f, err := r.f, r.werr
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	n := sp.n
	if headOnly {
		n = sp.head
	}
	rec := make([]byte, n)
	if _, err := f.ReadAt(rec, sp.off); err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	return rec, nil
}

// Close closes the file, which takes its records with it. A second Close
// does nothing.
func (r *Records) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f, r.at = nil, nil
	return err
}
