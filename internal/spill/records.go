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
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	end int64 // bytes appended, buffered ones included
	// Record i starts at offs[i] and ends where the next one starts (the
	// last at end); its first heads[i] bytes are its head. 12 bytes a
	// record: a million of them are held in 12 MB.
	offs  []int64
	heads []uint32
	werr  error // the first write error: every later call returns it
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
	return len(r.offs)
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
	r.offs = append(r.offs, r.end)
	r.heads = append(r.heads, uint32(len(head)))
	r.end += int64(len(head) + len(body))
	return len(r.offs) - 1, nil
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
	if i < 0 || i >= len(r.offs) {
		r.mu.Unlock()
		return nil, fmt.Errorf("spill: no record %d", i)
	}
	off, end := r.offs[i], r.end
	if i+1 < len(r.offs) {
		end = r.offs[i+1]
	}
	if r.werr == nil && end > r.end-int64(r.w.Buffered()) { // still in the buffer
		if err := r.w.Flush(); err != nil {
			r.werr = fmt.Errorf("spill: %w", err)
		}
	}
	f, err := r.f, r.werr
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	n := end - off
	if headOnly {
		n = int64(r.heads[i])
	}
	rec := make([]byte, n)
	if _, err := f.ReadAt(rec, off); err != nil {
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
	r.f, r.offs, r.heads = nil, nil, nil
	return err
}
