package replay

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// readBack is what a journal gives back of a record: JSON decoded into
// plain values, as State.apply sees it.
func readBack(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

func TestAPlanReadsBackFromItsJournalEntryAsItWasPlanned(t *testing.T) {
	a, b := triage.Route{Exchange: "orders", RoutingKey: "order.created"}, triage.Route{RoutingKey: "dest"}
	rev := &Revision{ID: "rev-1", SHA256: strings.Repeat("a", 64), OriginalSHA256: strings.Repeat("b", 64)}
	for _, tc := range []struct {
		name  string
		items []Item
		runs  int
	}{
		{"none", nil, 0},
		{"one route", []Item{{ID: "m-1", Route: b}, {ID: "m-2", Route: b}, {ID: "m-3", Route: b}}, 1},
		{"original and not, interleaved", []Item{{ID: "m-1", Route: a, Original: true}, {ID: "m-2", Route: a}, {ID: "m-3", Route: a}, {ID: "m-4", Route: b, Original: true}, {ID: "m-5", Route: a, Original: true}}, 4},
		{"a revision and a named body", []Item{{ID: "m-1", Route: a, Original: true, Revision: rev}, {ID: "m-2", Route: a, Original: true}, {ID: "m-3", Route: a, Original: true, BodySHA256: strings.Repeat("c", 64)}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Plan{ID: "rp-1", Vhost: "v", Queue: "orders.parking", Items: ItemsOf(tc.items...), Options: Options{Rate: 50, Canary: 2}}
			rec := p.record()
			if len(rec.Runs) != tc.runs {
				t.Errorf("%d runs, want %d", len(rec.Runs), tc.runs)
			}
			var s State
			err := s.apply(triage.Recorded{Record: triage.Record{Action: triage.ActionReplayPlan, MessageIDs: p.IDs(), Details: map[string]any{"plan": readBack(t, rec)}}})
			if err != nil {
				t.Fatal(err)
			}
			if s.Plan.Items.Len() != len(tc.items) || (len(tc.items) > 0 && !reflect.DeepEqual(s.Plan.Items.Slice(), tc.items)) {
				t.Errorf("items read back\n%+v\nwant\n%+v", s.Plan.Items, tc.items)
			}
			if s.Plan.ID != p.ID || s.Plan.Queue != p.Queue || s.Plan.Options.Rate != 50 {
				t.Errorf("plan read back %+v", s.Plan)
			}
		})
	}
}

// The entry's ids are the plan's; its items add a run of their route, not
// each id again: the plan detail of 100,000 items to one route is a few
// hundred bytes (417; it was 10.8 MB, and a million's 108 MB beside the ids).
func TestAPlansJournalEntryKeepsEachIDOnce(t *testing.T) {
	p := Plan{ID: "rp-1", Queue: "big.dlq"}
	for i := range 100_000 {
		p.Items.Append(Item{ID: fmt.Sprintf("%036d", i), Route: triage.Route{RoutingKey: "dest"}})
	}
	raw, err := json.Marshal(p.record())
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 2048 || strings.Contains(string(raw), p.Items.At(0).ID) {
		t.Errorf("the plan detail is %d bytes (ids in it: %t)", len(raw), strings.Contains(string(raw), p.Items.At(0).ID))
	}
}

// A plan journalled before item runs (its items whole) still resumes.
func TestAPlanJournalledWithItsItemsWholeReadsBack(t *testing.T) {
	items := []Item{{ID: "a", Route: triage.Route{RoutingKey: "q"}, Original: true}, {ID: "b", Route: triage.Route{RoutingKey: "q"}}}
	old := map[string]any{"id": "rp-1", "queue": "q", "items": readBack(t, items)}
	var s State
	if err := s.apply(triage.Recorded{Record: triage.Record{Action: triage.ActionReplayPlan, MessageIDs: []string{"a", "b"}, Details: map[string]any{"plan": old}}}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Plan.Items.Slice(), items) {
		t.Errorf("items %+v, want %+v", s.Plan.Items, items)
	}
}

// A damaged entry (runs that do not count its ids, extras out of place) is
// refused, never guessed at: a resume would hold and publish other
// messages than the plan's.
func TestADamagedPlanEntryIsRefused(t *testing.T) {
	p := Plan{ID: "rp-1", Items: ItemsOf(Item{ID: "a", Route: triage.Route{RoutingKey: "q"}}, Item{ID: "b", Route: triage.Route{RoutingKey: "q"}, BodySHA256: "x"})}
	good := p.record()
	for _, tc := range []struct {
		name string
		ids  []string
		edit func(r *planRecord)
	}{
		{"an id more", []string{"a", "b", "c"}, func(*planRecord) {}},
		{"an id less", []string{"a"}, func(*planRecord) {}},
		{"a run of none", []string{"a", "b"}, func(r *planRecord) { r.Runs = append(r.Runs, itemRun{}) }},
		{"a negative run", []string{"a", "b"}, func(r *planRecord) { r.Runs = []itemRun{{Count: 3}, {Count: -1}} }},
		{"extras past the end", []string{"a", "b"}, func(r *planRecord) { r.Extras[0].At = 2 }},
		{"items and runs", []string{"a", "b"}, func(r *planRecord) { r.Items = p.Items.Slice() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := good
			r.Runs, r.Extras = append([]itemRun(nil), good.Runs...), append([]itemExtras(nil), good.Extras...)
			tc.edit(&r)
			var s State
			err := s.apply(triage.Recorded{Record: triage.Record{Action: triage.ActionReplayPlan, MessageIDs: tc.ids, Details: map[string]any{"plan": readBack(t, r)}}})
			if err == nil {
				t.Errorf("read back as %+v", s.Plan.Items)
			}
		})
	}
}
