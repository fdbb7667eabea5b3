package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"unsafe"

	"github.com/dlqt/dlqt/internal/triage"
)

// Items are a plan's messages, in queue order. The plan of a whole queue
// has a million of them, so an item keeps its id (its bytes packed with
// the others') and the index of its route in a table of the plan's few
// routes; the edited body or the approved body's sum that a few items have
// is kept aside, by place. Kept as []Item, an item took 128 bytes with its
// id (an 80-byte struct and the id's own allocation), and a plan of
// 1,000,000 beside the read it was made from set a replay's peak; now it
// takes its id's length and 20 bytes.
//
// An Items value shares its storage with its copies, as a slice does:
// Clone one before changing it while another is in use.
type Items struct {
	ids    []string
	route  []uint32             // the route's index in t.routes <<1 | 1 when it is the message's original
	extras map[int32]itemExtras // by place (their At unused)
	t      *itemTable
}

// itemTable is what copies of an Items share: it is only ever added to, so
// no copy's ids or route indexes change under another's append.
type itemTable struct {
	chunk  []byte // where the next id's bytes go
	routes []triage.Route
	find   map[triage.Route]uint32
}

// idChunk is the size of the blocks ids are packed in; an id longer than
// a quarter of it gets its own.
const idChunk = 64 << 10

// ItemsOf are the items given, in their order.
func ItemsOf(items ...Item) Items {
	var s Items
	s.Grow(len(items))
	for _, it := range items {
		s.Append(it)
	}
	return s
}

// Len is how many items there are.
func (s Items) Len() int { return len(s.ids) }

// ID is item i's message id.
func (s Items) ID(i int) string { return s.ids[i] }

// At is item i.
func (s Items) At(i int) Item {
	r := s.route[i]
	it := Item{ID: s.ids[i], Route: s.t.routes[r>>1], Original: r&1 == 1}
	if x, ok := s.extras[int32(i)]; ok {
		it.Revision, it.BodySHA256 = x.Revision, x.BodySHA256
	}
	return it
}

// All are the items with their places, in order.
func (s Items) All() iter.Seq2[int, Item] {
	return func(yield func(int, Item) bool) {
		for i := range s.ids {
			if !yield(i, s.At(i)) {
				return
			}
		}
	}
}

// Slice is the items as a slice of their own.
func (s Items) Slice() []Item {
	if s.Len() == 0 {
		return nil
	}
	out := make([]Item, s.Len())
	for i, it := range s.All() {
		out[i] = it
	}
	return out
}

// IDs are the items' message ids, in order. The slice is the caller's;
// the ids share the items' bytes.
func (s Items) IDs() []string { return slices.Clone(s.ids) }

// Grow makes room for n more items.
func (s *Items) Grow(n int) {
	s.ids, s.route = slices.Grow(s.ids, n), slices.Grow(s.route, n)
}

// Append adds it at the end; its id is copied, so the items keep nothing
// the caller's strings point into (the read's index a plan is made from).
func (s *Items) Append(it Item) {
	if s.t == nil {
		s.t = &itemTable{find: map[triage.Route]uint32{}}
	}
	s.ids = append(s.ids, s.t.pack(it.ID))
	s.route = append(s.route, s.t.index(it.Route, it.Original))
	s.setExtras(len(s.ids)-1, it)
}

// Set makes item i it.
func (s *Items) Set(i int, it Item) {
	if s.ids[i] != it.ID {
		s.ids[i] = s.t.pack(it.ID)
	}
	s.route[i] = s.t.index(it.Route, it.Original)
	s.setExtras(i, it)
}

func (s *Items) setExtras(i int, it Item) {
	if it.Revision == nil && it.BodySHA256 == "" {
		delete(s.extras, int32(i))
		return
	}
	if s.extras == nil {
		s.extras = map[int32]itemExtras{}
	}
	s.extras[int32(i)] = itemExtras{Revision: it.Revision, BodySHA256: it.BodySHA256}
}

// DecidedByBody is whether some item has a revision or a body an approval
// named it by.
func (s Items) DecidedByBody() bool { return len(s.extras) > 0 }

// String lists the items, for tests and debugging.
func (s Items) String() string { return fmt.Sprint(s.Slice()) }

// Clone is a copy whose items may change without changing s's, even from
// another goroutine: it has a route table of its own (its ids still point
// into s's chunks, which never change), so what it adds is written to
// nothing s reads.
func (s Items) Clone() Items {
	c := Items{ids: slices.Clone(s.ids), route: slices.Clone(s.route), extras: maps.Clone(s.extras)}
	if s.t != nil {
		c.t = &itemTable{routes: slices.Clone(s.t.routes), find: maps.Clone(s.t.find)}
	}
	return c
}

// extraPlaces are the places of the items with a revision or a named body, in
// order.
func (s Items) extraPlaces() []int32 {
	return slices.Sorted(maps.Keys(s.extras))
}

// pack is id's bytes copied into the table's current chunk.
func (t *itemTable) pack(id string) string {
	if id == "" {
		return ""
	}
	if len(id) > idChunk/4 {
		return strings.Clone(id)
	}
	if cap(t.chunk)-len(t.chunk) < len(id) {
		t.chunk = make([]byte, 0, idChunk)
	}
	at := len(t.chunk)
	t.chunk = append(t.chunk, id...)
	b := t.chunk[at:len(t.chunk):len(t.chunk)]
	return unsafe.String(unsafe.SliceData(b), len(b)) // written once, never changed: only appended past
}

// index is the route's code: its place in the table, and original.
func (t *itemTable) index(r triage.Route, original bool) uint32 {
	k, ok := t.find[r]
	if !ok {
		k = uint32(len(t.routes))
		t.routes = append(t.routes, r)
		t.find[r] = k
	}
	code := k << 1
	if original {
		code |= 1
	}
	return code
}

// MarshalJSON writes the items as a list of items.
func (s Items) MarshalJSON() ([]byte, error) {
	if s.Len() == 0 {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range s.All() {
		if i > 0 {
			b.WriteByte(',')
		}
		raw, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		b.Write(raw)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a list of items.
func (s *Items) UnmarshalJSON(raw []byte) error {
	var list []Item
	if err := json.Unmarshal(raw, &list); err != nil {
		return err
	}
	*s = ItemsOf(list...)
	return nil
}
