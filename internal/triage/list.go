package triage

// List is the messages of a read by position: a slice of them (Slice), a
// spilled read's packed index entries (*Index), or some of either
// (*Subset). At returns a copy: changing it changes nothing in the list.
type List interface {
	Len() int
	At(i int) Triaged
}

// Slice is a List of messages held whole, or as index entries, in memory.
type Slice []Triaged

func (s Slice) Len() int         { return len(s) }
func (s Slice) At(i int) Triaged { return s[i] }

// Subset is the messages of Of at the positions Idx, in that order: what
// a filter matched of a read, without a copy of each.
type Subset struct {
	Of  List
	Idx []int
}

func (s *Subset) Len() int         { return len(s.Idx) }
func (s *Subset) At(i int) Triaged { return s.Of.At(s.Idx[i]) }

// SameList reports whether a and b are the very same list (not equal
// ones): what a result computed over a may be reused for.
func SameList(a, b List) bool {
	if a == nil || b == nil || a.Len() != b.Len() {
		return false
	}
	switch a := a.(type) {
	case Slice:
		b, ok := b.(Slice)
		return ok && (len(a) == 0 || &a[0] == &b[0])
	case *Index:
		b, ok := b.(*Index)
		return ok && a == b
	case *Subset:
		b, ok := b.(*Subset)
		return ok && a == b
	}
	return false
}

// IDs is the ids of l's messages, in order.
func IDs(l List) []string {
	ids := make([]string, l.Len())
	for i := range ids {
		ids[i] = l.At(i).ID
	}
	return ids
}

// GroupList is GroupMessages over a List.
func GroupList(l List) []Group {
	if s, ok := l.(Slice); ok {
		return GroupMessages(s)
	}
	g := NewGrouper(true)
	for i := range l.Len() {
		t := l.At(i)
		g.Add(&t, i)
	}
	return g.Groups()
}
