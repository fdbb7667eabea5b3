package replay

import (
	"fmt"

	"github.com/dlqt/dlqt/internal/triage"
)

// planRecord is a plan as its journal entry keeps it. The entry's message
// ids are the plan's ids, in item order; the items themselves are kept
// beside them as runs of one route, so no id is written twice. Each item
// kept whole (id, route, original), a plan of 1,000,000 wrote every id
// twice: a 100 MB entry, and a heap profile of its journalling held three
// times that while it was encoded and made canonical.
//
// A plan journalled before item runs has its items in "items" and no
// runs; it reads back as it was written.
type planRecord struct {
	Plan
	// Items shadows Plan.Items: null in a plan written with runs, the
	// items of one written before.
	Items  []Item       `json:"items"`
	Runs   []itemRun    `json:"item_runs"`
	Extras []itemExtras `json:"item_extras,omitempty"`
}

// itemRun is Count items in a row with one route.
type itemRun struct {
	Route    triage.Route `json:"route"`
	Original bool         `json:"original"`
	Count    int          `json:"count"`
}

// itemExtras is what an item has beyond its route: its edited body, or the
// body an approved proposal named it by. At is its place in the plan.
type itemExtras struct {
	At         int       `json:"at"`
	Revision   *Revision `json:"revision,omitempty"`
	BodySHA256 string    `json:"body_sha256,omitempty"`
}

// record is p as its journal entry keeps it, beside p.IDs().
func (p Plan) record() planRecord {
	rec := planRecord{Plan: p}
	rec.Plan.Items = Items{}
	rec.Runs = []itemRun{} // never omitted: the plan is one of runs, even of none
	items := p.Items
	for i, code := range items.route {
		if n := len(rec.Runs); n > 0 && i > 0 && items.route[i-1] == code {
			rec.Runs[n-1].Count++
		} else {
			it := items.At(i)
			rec.Runs = append(rec.Runs, itemRun{Route: it.Route, Original: it.Original, Count: 1})
		}
	}
	for _, at := range items.extraPlaces() {
		x := items.extras[at]
		rec.Extras = append(rec.Extras, itemExtras{At: int(at), Revision: x.Revision, BodySHA256: x.BodySHA256})
	}
	return rec
}

// plan is the plan a journal entry recorded, its items' ids from the
// entry's message ids. Runs that do not count the ids exactly, or extras
// out of place, are a damaged entry: the plan is not guessed.
func (r planRecord) plan(ids []string) (Plan, error) {
	p := r.Plan
	if r.Runs == nil {
		p.Items = ItemsOf(r.Items...)
		return p, nil
	}
	if len(r.Items) > 0 {
		return Plan{}, fmt.Errorf("replay plan: both items and item runs")
	}
	p.Items = Items{}
	p.Items.Grow(len(ids))
	for _, run := range r.Runs {
		if run.Count <= 0 || run.Count > len(ids)-p.Items.Len() {
			return Plan{}, fmt.Errorf("replay plan: its item runs count more or other than its %d message ids", len(ids))
		}
		for range run.Count {
			p.Items.Append(Item{ID: ids[p.Items.Len()], Route: run.Route, Original: run.Original})
		}
	}
	if p.Items.Len() != len(ids) {
		return Plan{}, fmt.Errorf("replay plan: its item runs count %d of its %d message ids", p.Items.Len(), len(ids))
	}
	for _, x := range r.Extras {
		if x.At < 0 || x.At >= p.Items.Len() {
			return Plan{}, fmt.Errorf("replay plan: item %d has extras, of %d items", x.At, p.Items.Len())
		}
		it := p.Items.At(x.At)
		it.Revision, it.BodySHA256 = x.Revision, x.BodySHA256
		p.Items.Set(x.At, it)
	}
	return p, nil
}
