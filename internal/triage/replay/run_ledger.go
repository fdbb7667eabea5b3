package replay

import (
	"cmp"
	"slices"
	"sort"

	"github.com/dlqt/dlqt/internal/triage"
)

// ledger is what a run knows of each item of its plan, by the item's index
// in Plan.Items: two bytes an item, and four more to find it by its id.
// Maps of every id (the items again, what is held, each outcome, confirms
// and acks) took about 300 bytes an item: 225 MB of the heap of a replay
// of 1,000,000 in a profile; one map from id to index, 47 bytes an item.
type ledger struct {
	items   Items
	byID    []int32 // indexes in items, in the order of their ids
	st      []itemState
	unacked int // items flagged unacked
	// later are items added while the run goes on (a selecting replay's,
	// add), by id, until they are sorted into byID: that happens once
	// they are a quarter as many as byID, so each id is sorted in a few
	// times over a run, and the map stays a small part of the items.
	later map[string]int32
}

type itemState struct {
	outcome uint8 // an index in outcomeCodes; 0: none yet
	flags   uint8
}

// What a ledger keeps of an item besides its outcome.
const (
	flagHeld      uint8 = 1 << iota // held, not yet acked or requeued
	flagConfirmed                   // the destination confirmed its copy
	flagUnacked                     // confirmed, but its source could not be acked
	flagAckLater                    // confirmed while the hold reads: acked once the read has ended
)

// outcomeCodes are the outcomeCodes a ledger can keep, by their code; "" is none.
var outcomeCodes = []Outcome{"", OutcomeResolved, OutcomeFailedAgain, OutcomeReturned, OutcomeCollateral, OutcomeUntouched, OutcomeConfirmed, OutcomePublished}

func newLedger(items Items) ledger {
	l := ledger{items: items, byID: make([]int32, items.Len()), st: make([]itemState, items.Len())}
	for i := range items.Len() {
		l.byID[i] = int32(i)
	}
	slices.SortStableFunc(l.byID, func(a, b int32) int { return cmp.Compare(items.ID(int(a)), items.ID(int(b))) })
	return l
}

// index is the index of item id in the plan; of an id planned twice, the
// last.
func (l *ledger) index(id string) (int32, bool) {
	if i, ok := l.later[id]; ok {
		return i, true
	}
	n := sort.Search(len(l.byID), func(k int) bool { return l.items.ID(int(l.byID[k])) > id })
	if n == 0 || l.items.ID(int(l.byID[n-1])) != id {
		return 0, false
	}
	return l.byID[n-1], true
}

// item is the plan's item id, if the plan has one.
func (l *ledger) item(id string) (Item, bool) {
	i, ok := l.index(id)
	if !ok {
		return Item{}, false
	}
	return l.items.At(int(i)), true
}

// add makes it an item of the run, with no outcome yet: a message a
// selecting replay's hold took. The caller's Items is the ledger's after.
func (l *ledger) add(it Item) {
	i := int32(l.items.Len())
	l.items.Append(it)
	l.st = append(l.st, itemState{})
	if l.later == nil {
		l.later = map[string]int32{}
	}
	l.later[it.ID] = i
	if len(l.later) >= max(1024, len(l.byID)/4) {
		l.sortLater()
	}
}

// sortLater merges the items added since the last time into byID.
func (l *ledger) sortLater() {
	if len(l.later) == 0 {
		return
	}
	add := make([]int32, 0, len(l.later))
	for _, i := range l.later {
		add = append(add, i)
	}
	byID := func(a, b int32) int { return cmp.Compare(l.items.ID(int(a)), l.items.ID(int(b))) }
	slices.SortFunc(add, byID)
	l.byID = triage.MergePlaces(l.byID, add, byID)
	l.later = nil
}

// outcome is item id's outcome so far, and whether it has one.
func (l *ledger) outcome(id string) (Outcome, bool) {
	i, ok := l.index(id)
	if !ok || l.st[i].outcome == 0 {
		return "", false
	}
	return outcomeCodes[l.st[i].outcome], true
}

// is is item id's outcome so far: o, or not.
func (l *ledger) is(id string, o Outcome) bool {
	got, _ := l.outcome(id)
	return got == o
}

// settle gives item id its outcome (an id the plan does not have has none).
func (l *ledger) settle(id string, o Outcome) {
	if i, ok := l.index(id); ok {
		l.st[i].outcome = outcomeCode(o)
	}
}

// has says whether item id carries flag f.
func (l *ledger) has(id string, f uint8) bool {
	i, ok := l.index(id)
	return ok && l.st[i].flags&f != 0
}

// flag sets (on) or clears flag f of item id.
func (l *ledger) flag(id string, f uint8, on bool) {
	if i, ok := l.index(id); ok {
		l.flagAt(int(i), f, on)
	}
}

func (l *ledger) flagAt(i int, f uint8, on bool) {
	was := l.st[i].flags&flagUnacked != 0
	if on {
		l.st[i].flags |= f
	} else {
		l.st[i].flags &^= f
	}
	if now := l.st[i].flags&flagUnacked != 0; now != was {
		if now {
			l.unacked++
		} else {
			l.unacked--
		}
	}
}

// outcomeCode is o's code in outcomeCodes.
func outcomeCode(o Outcome) uint8 { return uint8(slices.Index(outcomeCodes, o)) }

// outcomeTable is a run's result by item: what finds an id (a ledger's
// items and byID, which never change once made) and a code an item.
type outcomeTable struct {
	find  ledger
	codes []uint8
}

// Outcome is message id's outcome in the replay; "" when it was not in
// the plan.
func (r Result) Outcome(id string) Outcome {
	i, ok := r.outcomes.find.index(id)
	if !ok || int(i) >= len(r.outcomes.codes) {
		return ""
	}
	return outcomeCodes[r.outcomes.codes[i]]
}

// Items counts the messages the replay was about: its plan's, or, of a
// replay that selected as it held, the ones its hold took.
func (r Result) Items() int { return len(r.outcomes.codes) }

// Outcomes are every message's outcome, by id: a map of the whole plan,
// for a small one (a wave of an ordered replay); Outcome looks one up.
func (r Result) Outcomes() map[string]Outcome {
	out := make(map[string]Outcome, len(r.outcomes.codes))
	for i, c := range r.outcomes.codes {
		out[r.outcomes.find.items.ID(i)] = outcomeCodes[c]
	}
	return out
}
