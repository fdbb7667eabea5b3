package broker

import (
	"slices"
	"strconv"
	"strings"

	"github.com/dlqt/dlqt/internal/triage"
)

// wanted are the ids a hold was asked for, and the base ids an occurrence
// suffix of one of them names ("a" of "a#2"), sorted and each once: what
// the hold knows of each is kept by its place here. Three maps keyed by
// id (what each id may be, where each held one is, and where the store
// has it) took some 170 bytes a message held: 30% of the heap of a replay
// of 300,000 in a profile. The ids are the caller's strings, not copies.
//
// A selecting hold (HoldSelecting) is asked for no id: it adds each id it
// takes as it reads (add), after the sorted ones. It finds those by their
// places in the order of their ids (added), but for the latest (recent), a
// map sorted in once it is a quarter as large: a map of every id took 40
// bytes and more a message in a hold of 1,000,000.
type wanted struct {
	ids    []string
	kind   []byte // by place: selectedID, suffixedID or both
	sorted int    // ids[:sorted] are the ones asked for, sorted
	added  []int32
	recent map[string]int32
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
	if k, ok := w.recent[id]; ok {
		return int(k), true
	}
	if n, ok := slices.BinarySearchFunc(w.added, id, func(k int32, id string) int { return strings.Compare(w.ids[k], id) }); ok {
		return int(w.added[n]), true
	}
	return slices.BinarySearch(w.ids[:w.sorted], id)
}

// add makes id a selected one, a selecting hold's choice, and returns its
// place. The hold's lock (heldSources.mu) is held: Load and Ack look ids up.
func (w *wanted) add(id string) int {
	if k, ok := w.place(id); ok {
		return k
	}
	if w.recent == nil {
		w.recent = map[string]int32{}
	}
	k := len(w.ids)
	w.ids, w.kind = append(w.ids, id), append(w.kind, selectedID)
	w.recent[id] = int32(k)
	if len(w.recent) >= max(1024, len(w.added)/4) {
		w.sortRecent()
	}
	return k
}

// sortRecent merges the recent places into added, in the order of their ids.
func (w *wanted) sortRecent() {
	byID := func(a, b int32) int { return strings.Compare(w.ids[a], w.ids[b]) }
	recent := make([]int32, 0, len(w.recent))
	for _, k := range w.recent {
		recent = append(recent, k)
	}
	slices.SortFunc(recent, byID)
	w.added = triage.MergePlaces(w.added, recent, byID)
	w.recent = nil
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
