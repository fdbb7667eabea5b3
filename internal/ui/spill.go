package ui

import (
	"slices"
	"sync"

	"github.com/dlqt/dlqt/internal/spill"
)

// spillSet is every spill store this TUI's browses made: the current read's
// stays open while its screens may read back from it; the others close
// (and go, unless kept) as soon as a newer read replaces them, and all
// close when the program ends.
type spillSet struct {
	dir  string // "" = the user's cache directory
	keep bool
	kept func(path string)
	off  bool // whole messages stay in memory
	mu   sync.Mutex
	open []*spill.Store
}

func newSpillSet(o SpillOptions) *spillSet {
	return &spillSet{dir: o.Dir, keep: o.Keep, kept: o.Kept, off: o.InMemory}
}

// create makes the store of a new browse (on the browse's goroutine).
func (s *spillSet) create() (*spill.Store, error) {
	if s == nil || s.off {
		return nil, nil
	}
	st, err := spill.Create(s.dir, s.keep)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.open = append(s.open, st)
	s.mu.Unlock()
	return st, nil
}

// closeOne closes the store of a read nobody shows any more.
func (s *spillSet) closeOne(st *spill.Store) {
	if s == nil || st == nil {
		return
	}
	s.mu.Lock()
	s.open = slices.DeleteFunc(s.open, func(o *spill.Store) bool { return o == st })
	s.mu.Unlock()
	if path, _ := st.Close(); path != "" && s.kept != nil {
		s.kept(path)
	}
}

// closeAllBut closes every store but current (nil: all of them).
func (s *spillSet) closeAllBut(current *spill.Store) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	var closing []*spill.Store
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
