package replay

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

func TestItemsKeepWhatWasAppended(t *testing.T) {
	a, b := triage.Route{Exchange: "orders", RoutingKey: "order.created"}, triage.Route{RoutingKey: "dest"}
	rev := &Revision{ID: "rev-1", SHA256: strings.Repeat("a", 64)}
	long := strings.Repeat("x", idChunk) // its own allocation, not a chunk's
	for _, tc := range []struct {
		name  string
		items []Item
	}{
		{"none", nil},
		{"one", []Item{{ID: "m-1", Route: a, Original: true}}},
		{"the same id with two routes", []Item{{ID: "m-1", Route: a}, {ID: "m-1", Route: b, Original: true}}},
		{"an empty id and a long one", []Item{{ID: "", Route: a}, {ID: long, Route: b}}},
		{"a revision and a named body", []Item{{ID: "m-1", Route: a, Revision: rev}, {ID: "m-2", Route: b, BodySHA256: "c"}, {ID: "m-3", Route: a, Original: true}}},
		{"more ids than a chunk holds", manyItems(3*idChunk/10, a, b)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ItemsOf(tc.items...)
			if s.Len() != len(tc.items) || !reflect.DeepEqual(s.Slice(), tc.items) {
				t.Fatalf("items %d, want %d; differ: %t", s.Len(), len(tc.items), !reflect.DeepEqual(s.Slice(), tc.items))
			}
			for i, it := range tc.items {
				if s.ID(i) != it.ID || s.At(i) != it {
					t.Errorf("item %d: %+v, want %+v", i, s.At(i), it)
				}
			}
			if s.DecidedByBody() != (tc.name == "a revision and a named body") {
				t.Errorf("decided by body: %t", s.DecidedByBody())
			}
			raw, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(tc.items) // the form plans were journalled in
			if string(raw) != string(want) {
				t.Errorf("json %.200s, want %.200s", raw, want)
			}
			var back Items
			if err := json.Unmarshal(raw, &back); err != nil || !reflect.DeepEqual(back.Slice(), tc.items) {
				t.Errorf("read back %v (%v)", back, err)
			}
		})
	}
}

func manyItems(n int, a, b triage.Route) []Item {
	out := make([]Item, n)
	for i := range out {
		r := a
		if i%3 == 0 {
			r = b
		}
		out[i] = Item{ID: fmt.Sprintf("%036d", i), Route: r, Original: i%2 == 0}
	}
	return out
}

// Copies share where ids are packed: what one appends or sets never
// changes an id or a route another has, as a copied slice's elements
// would not change under another's append past its length.
func TestItemsCopiesDoNotChangeEachOther(t *testing.T) {
	a, b := triage.Route{RoutingKey: "a"}, triage.Route{RoutingKey: "b"}
	s := ItemsOf(Item{ID: "m-1", Route: a}, Item{ID: "m-2", Route: a})
	c, d := s, s.Clone()
	c.Append(Item{ID: "c-3", Route: b})
	s.Append(Item{ID: "s-3", Route: a, BodySHA256: "x"})
	d.Set(0, Item{ID: "d-1", Route: b, Original: true})
	d.Append(Item{ID: "d-3", Route: triage.Route{RoutingKey: "c"}})
	for _, tc := range []struct {
		name string
		got  Items
		want []Item
	}{
		{"the original", s, []Item{{ID: "m-1", Route: a}, {ID: "m-2", Route: a}, {ID: "s-3", Route: a, BodySHA256: "x"}}},
		{"a copy", c, []Item{{ID: "m-1", Route: a}, {ID: "m-2", Route: a}, {ID: "c-3", Route: b}}},
		{"a clone", d, []Item{{ID: "d-1", Route: b, Original: true}, {ID: "m-2", Route: a}, {ID: "d-3", Route: triage.Route{RoutingKey: "c"}}}},
	} {
		if got := tc.got.Slice(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// Items are set in place: a revision given and taken back, a route
// changed, the id changed.
func TestItemsSetChangesOneItem(t *testing.T) {
	a, b := triage.Route{RoutingKey: "a"}, triage.Route{RoutingKey: "b"}
	s := ItemsOf(Item{ID: "m-1", Route: a}, Item{ID: "m-2", Route: a})
	s.Set(1, Item{ID: "m-2", Route: a, Revision: &Revision{ID: "rev-1"}})
	if !s.DecidedByBody() || s.At(1).Revision == nil || s.At(0).Revision != nil {
		t.Errorf("after a revision: %v", s)
	}
	s.Set(1, Item{ID: "m-2", Route: a})
	if s.DecidedByBody() {
		t.Errorf("a revision taken back is still there: %v", s)
	}
	s.Set(0, Item{ID: "n-1", Route: b, Original: true})
	if want := []Item{{ID: "n-1", Route: b, Original: true}, {ID: "m-2", Route: a}}; !reflect.DeepEqual(s.Slice(), want) {
		t.Errorf("%v, want %v", s, want)
	}
}

// A million items cost their ids and a few bytes each (an Item each, 128).
func TestAMillionItemsKeepAFewBytesBesideTheirIDs(t *testing.T) {
	if testing.Short() {
		t.Skip("a million items")
	}
	const n = 1_000_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%036d", i)
	}
	before := liveHeap()
	var s Items
	s.Grow(n)
	for i, id := range ids {
		s.Append(Item{ID: id, Route: triage.Route{Exchange: "orders", RoutingKey: fmt.Sprint(i % 7)}})
	}
	grew := int64(liveHeap()) - int64(before)
	t.Logf("%d items: %.1f MB, %d bytes an item", n, float64(grew)/1e6, grew/n)
	if per := grew / n; per > 60 { // 36 of id, 16 to point at it, 4 of route
		t.Errorf("%d bytes an item, want at most 60", per)
	}
	if s.At(n-1).ID != ids[n-1] {
		t.Errorf("last item %+v", s.At(n-1))
	}
}

// A clone is changed from another goroutine while the items it was made
// from are read (a screen's plan while its revisions are read): nothing
// they share is written (go test -race).
func TestAClonesChangesRaceWithNothing(t *testing.T) {
	a := triage.Route{RoutingKey: "a"}
	s := ItemsOf(Item{ID: "m-1", Route: a}, Item{ID: "m-2", Route: a})
	c := s.Clone()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			c.Append(Item{ID: fmt.Sprint("c-", i), Route: triage.Route{RoutingKey: fmt.Sprint("r-", i)}})
			c.Set(0, Item{ID: "m-1", Route: triage.Route{RoutingKey: fmt.Sprint("s-", i)}, Revision: &Revision{ID: "rev"}})
		}
	}()
	for range 100 {
		if it := s.At(0); it.Route != a || it.Revision != nil {
			t.Fatalf("the original's item changed: %+v", it)
		}
		s.Append(Item{ID: "s-3", Route: triage.Route{RoutingKey: "x"}})
	}
	<-done
	if c.Len() != 102 || c.At(0).Revision == nil || c.At(101).Route.RoutingKey != "r-99" {
		t.Errorf("the clone: %d items, first %+v, last %+v", c.Len(), c.At(0), c.At(101))
	}
}
