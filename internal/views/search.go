package views

import (
	"bytes"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
)

// searchSlice is how long one step of a filter may run in Update: a key
// is answered within a frame however many rows there are, and the rest of
// the rows are searched in further steps, one Update (SearchStep message)
// each, so keys still come in between.
const searchSlice = 6 * time.Millisecond

// wholeRows is how many rows a step tests before it looks at the clock or
// the screen: a list of up to this many rows is filtered whole in the
// key's Update, as a plain scan would.
const wholeRows = 2048

// search is the filter in force being computed over the rows, in row
// order, a slice at a time. It runs in Update, never in a goroutine: the
// screens' rows read state that Update changes (marks, tags).
//
// The rows still to test are list (in row order) and then every row from
// tail on; the table's visible rows are what matched so far, and always
// come before them. A substring that contains the last one starts from
// what the last one matched plus what it had not tested yet, so typing
// on rescans only the rows that can still match.
type search struct {
	id        uint64
	query     string         // lowered substring; "" none
	matcher   func(int) bool // field filter; nil none
	list      []int          // rows still to test, below tail; shares visible's array
	tail      int            // every row from tail on is still to test
	done      bool           // visible holds every match
	scheduled bool           // a SearchStep for id is on its way
	// wantRow is the underlying row the cursor goes to once it is found
	// (the selection kept across new rows); wantPos the cursor index kept
	// meanwhile, clamped to what matched. -1: none; the user moving the
	// cursor drops both.
	wantRow, wantPos int
	buf              []byte // one row's lowered text, reused
	qb               []byte // query, as bytes
}

// SearchStep continues a search (a table's filter, the groups' field
// filter) in the next Update. It knows which search it continues: a step
// of a search a later key replaced does nothing.
type SearchStep struct{ cont func() }

// Continue runs one more slice of the search, unless it is stale.
func (m SearchStep) Continue() { m.cont() }

func stepCmd(cont func()) tea.Cmd {
	step := SearchStep{cont: cont}
	return func() tea.Msg { return step }
}

// SearchCmd is the command for the next step of the search in flight; nil
// when it is done or its step is already on its way.
func (t *Table) SearchCmd() tea.Cmd {
	s := &t.search
	if s.done || s.scheduled {
		return nil
	}
	s.scheduled = true
	id := s.id
	return stepCmd(func() {
		if s.id != id || s.done {
			return
		}
		s.scheduled = false
		t.step(searchSlice, false)
	})
}

// Searching reports a filter whose matches are still being counted: Len is
// what matched so far.
func (t *Table) Searching() bool { return !t.search.done }

// Settle finishes the search in flight at once, as the filter did before
// it searched in steps (tests and benchmarks).
func (t *Table) Settle() {
	for !t.search.done {
		t.step(time.Hour, false)
	}
}

// applyFilter starts searching the rows for the filter in force. It
// searches until the rows on screen are found or a slice is spent; the
// rest comes in SearchSteps.
func (t *Table) applyFilter(fresh bool) {
	s := &t.search
	q := strings.ToLower(t.query)
	narrow := !fresh && t.matcher == nil && s.matcher == nil && s.query != "" && strings.Contains(q, s.query)
	if s.done || s.wantPos < 0 {
		// a search replaced before it ended keeps the cursor it was keeping
		s.wantPos = t.cursor
	}
	if narrow {
		// what matched, then what was not tested yet, in one array: the
		// matches come first, so this only moves the untested down.
		t.visible = append(t.visible, s.list...)
		s.list = t.visible
	} else {
		s.list, s.tail = nil, 0
	}
	t.visible = t.visible[:0]
	s.id++
	s.query, s.qb, s.matcher, s.done, s.scheduled = q, []byte(q), t.matcher, false, false
	if !t.filtered() {
		s.list, s.tail, s.done = nil, t.n, true
		t.visible = t.visible[:0]
	}
	t.step(searchSlice, true)
}

// step tests rows for at most budget; with screen it stops as soon as the
// rows the screen draws are found. Past wholeRows, it looks every 256 rows.
func (t *Table) step(budget time.Duration, screen bool) {
	s := &t.search
	start := time.Now()
	need := t.offset + t.bodyHeight()
	if s.wantPos >= 0 {
		need = max(need, s.wantPos+1)
	}
	for n := 1; !s.done; n++ {
		var i int
		switch {
		case len(s.list) > 0:
			i, s.list = s.list[0], s.list[1:]
		case s.tail < t.n:
			i = s.tail
			s.tail++
		default:
			s.done = true
			continue
		}
		if t.test(i) {
			// writes at or below where list was read from
			t.visible = append(t.visible, i)
			if i == s.wantRow {
				t.cursor = len(t.visible) - 1
				s.wantRow, s.wantPos = -1, -1
			}
		}
		if len(s.list) == 0 && s.tail >= t.n {
			s.done = true
		}
		if t.stepRows > 0 {
			if n >= t.stepRows {
				break
			}
		} else if n >= wholeRows && n%256 == 0 && (screen && len(t.visible) >= need || time.Since(start) >= budget) {
			break
		}
	}
	if s.done {
		s.list = nil
	}
	if s.wantPos >= 0 {
		t.cursor = min(s.wantPos, max(t.Len()-1, 0))
	}
	if s.done {
		s.wantRow, s.wantPos = -1, -1
	}
	t.sizeInput()
	t.scroll()
}

// test reports whether row i passes the filter in force.
func (t *Table) test(i int) bool {
	s := &t.search
	if s.matcher != nil && !s.matcher(i) {
		return false
	}
	return s.query == "" || s.contains(t.row(i))
}

// contains reports whether the row's cells, joined by spaces and lowered,
// contain the query: strings.Contains(strings.ToLower(strings.Join(cells,
// " ")), query), without a string per row when the row is ASCII.
func (s *search) contains(cells []string) bool {
	b := s.buf[:0]
	for k, c := range cells {
		if k > 0 {
			b = append(b, ' ')
		}
		b = append(b, c...)
	}
	s.buf = b
	for j, c := range b {
		if c >= utf8.RuneSelf {
			// lowering the ASCII before j changed nothing ToLower would not
			return strings.Contains(strings.ToLower(string(b)), s.query)
		}
		if 'A' <= c && c <= 'Z' {
			b[j] = c + 'a' - 'A'
		}
	}
	return bytes.Contains(b, s.qb)
}

// untested reports whether row i is still to be tested.
func (s *search) untested(i int) bool {
	if s.done {
		return false
	}
	if i >= s.tail {
		return true
	}
	_, ok := slices.BinarySearch(s.list, i)
	return ok
}
