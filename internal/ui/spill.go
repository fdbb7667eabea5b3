package ui

import (
	"errors"
	"slices"
	"sync"

	"github.com/dlqt/dlqt/internal/spill"
	"github.com/dlqt/dlqt/internal/triage"
)

// spillStore is where a browse puts each message whole, for its screens
// to read back: a spill.File, unlinked as soon as it is made and never
// mapped into memory, or, with --keep, a spill.Store (a bbolt file that
// stays for dlqt --snapshot). A million messages read back through the
// Store's mapped file counted 58 MiB more of RSS in the TUI.
type spillStore interface {
	triage.Bodies
	Put(m triage.Message) error
	Flush() error
	Close() (kept string, err error)
}

// unkept is a spill.File as a spillStore: nothing of it stays.
type unkept struct{ *spill.File }

func (u unkept) Close() (string, error) { return "", u.File.Close() }

// spillSet is every spill store this TUI's browses made: the current read's
// stays open while its screens may read back from it; the others close
// (and go, unless kept) as soon as a newer read replaces them, and all
// close when the program ends.
type spillSet struct {
	dir   string // "" = the user's cache directory
	keep  bool
	kept  func(path string)
	mu    sync.Mutex
	open  []spillStore
	ended bool // the program is over: no new store
}

func newSpillSet(o SpillOptions) *spillSet {
	return &spillSet{dir: o.Dir, keep: o.Keep, kept: o.Kept}
}

// create makes the store of a new browse (on the browse's goroutine).
func (s *spillSet) create() (spillStore, error) {
	if s == nil {
		return nil, nil
	}
	var st spillStore
	if s.keep {
		kept, err := spill.Create(s.dir, true)
		if err != nil {
			return nil, err
		}
		st = kept
	} else {
		f, err := spill.CreateFile(s.dir)
		if err != nil {
			return nil, err
		}
		st = unkept{f}
	}
	s.mu.Lock()
	if s.ended { // a browse that started as the program ended
		s.mu.Unlock()
		st.Close()
		return nil, errSpillEnded
	}
	s.open = append(s.open, st)
	s.mu.Unlock()
	return st, nil
}

// closeOne closes the store of a read nobody shows any more.
func (s *spillSet) closeOne(st spillStore) {
	if s == nil || st == nil {
		return
	}
	s.mu.Lock()
	s.open = slices.DeleteFunc(s.open, func(o spillStore) bool { return o == st })
	s.mu.Unlock()
	if path, _ := st.Close(); path != "" && s.kept != nil {
		s.kept(path)
	}
}

var errSpillEnded = errors.New("dlqt is ending")

// closeAllBut closes every store but current; nil closes all of them, for
// good: the program is over.
func (s *spillSet) closeAllBut(current spillStore) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	s.ended = s.ended || current == nil
	var closing []spillStore
	still := s.open[:0]
	for _, st := range s.open {
		if st == current {
			still = append(still, st)
		} else {
			closing = append(closing, st)
		}
	}
	s.open = still
	s.mu.Unlock()
	var first error
	for _, st := range closing {
		path, err := st.Close()
		if err != nil && first == nil {
			first = err
		}
		if path != "" && s.kept != nil {
			s.kept(path)
		}
	}
	return first
}
