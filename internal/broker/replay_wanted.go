package broker

import (
	"slices"
	"strconv"
	"strings"
)

// wanted are the ids a hold was asked for, and the base ids an occurrence
// suffix of one of them names ("a" of "a#2"), sorted and each once: what
// the hold knows of each is kept by its place here. Three maps keyed by
// id (what each id may be, where each held one is, and where the store
// has it) took some 170 bytes a message held: 30% of the heap of a replay
// of 300,000 in a profile. The ids are the caller's strings, not copies.
//
// A selecting hold (HoldSelecting) is asked for no id: it adds each id it
// takes as it reads (add), after the sorted ones, and finds those by a map.
type wanted struct {
	ids    []string
	kind   []byte // by place: selectedID, suffixedID or both
	sorted int    // ids[:sorted] are the ones asked for, sorted
	added  map[string]int32
}

func newWanted(ids []string) *wanted {
	type entry struct {
		id   string
		kind byte
	}
	es := make([]entry, 0, len(ids))
	for _, id := range ids {
		es = append(es, entry{id, selectedID})
		if i := strings.LastIndexByte(id, '#'); i > 0 {
			if _, err := strconv.Atoi(id[i+1:]); err == nil {
				es = append(es, entry{id[:i], suffixedID}) // an occurrence suffix (SuffixIDs)
			}
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.id, b.id) })
	w := &wanted{ids: make([]string, 0, len(es)), kind: make([]byte, 0, len(es))}
	for _, e := range es {
		if n := len(w.ids); n > 0 && w.ids[n-1] == e.id {
			w.kind[n-1] |= e.kind
			continue
		}
		w.ids, w.kind = append(w.ids, e.id), append(w.kind, e.kind)
	}
	w.sorted = len(w.ids)
	return w
}

// place is where id is among the wanted, if it is.
func (w *wanted) place(id string) (int, bool) {
	if w == nil {
		return 0, false
	}
	if k, ok := w.added[id]; ok {
		return int(k), true
	}
	return slices.BinarySearch(w.ids[:w.sorted], id)
}

// add makes id a selected one, a selecting hold's choice, and returns its
// place. The hold's lock (heldSources.mu) is held: Load and Ack look ids up.
func (w *wanted) add(id string) int {
	if k, ok := w.place(id); ok {
		return k
	}
	if w.added == nil {
		w.added = map[string]int32{}
	}
	k := len(w.ids)
	w.ids, w.kind = append(w.ids, id), append(w.kind, selectedID)
	w.added[id] = int32(k)
	return k
}

// is says whether id is wanted as kind (selectedID, suffixedID).
func (w *wanted) is(id string, kind byte) bool {
	k, ok := w.place(id)
	return ok && w.kind[k]&kind != 0
}

// intern is id as the wanted keep it, when it is one of them: the
// caller's string, so that what a hold keeps of each delivery it read
// (passing.bases) does not keep the delivery's own copy of its id.
func (w *wanted) intern(id string) string {
	if k, ok := w.place(id); ok {
		return w.ids[k]
	}
	return id
}
