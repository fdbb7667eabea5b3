package broker

import (
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	amqp "github.com/rabbitmq/amqp091-go"
)

func TestAHoldFindsWhatItWantsByPlace(t *testing.T) {
	w := newWanted([]string{"c", "a#2", "b", "a", "c", "x#y", "d#3"})
	for _, tc := range []struct {
		id                 string
		selected, suffixed bool
	}{
		{"a", true, true}, {"a#2", true, false}, {"b", true, false}, {"c", true, false},
		{"d", false, true}, {"d#3", true, false}, {"x", false, false}, {"x#y", true, false}, {"e", false, false}, {"", false, false},
	} {
		if got := w.is(tc.id, selectedID); got != tc.selected {
			t.Errorf("%q selected: %t, want %t", tc.id, got, tc.selected)
		}
		if got := w.is(tc.id, suffixedID); got != tc.suffixed {
			t.Errorf("%q suffixed: %t, want %t", tc.id, got, tc.suffixed)
		}
	}
	if len(w.ids) != 7 { // a, a#2, b, c, d, d#3, x#y: each once
		t.Errorf("wanted %q", w.ids)
	}
	own := string([]byte("b")) // a delivery's own copy of an id
	if got := w.intern(own); got != "b" || unsafeData(got) == unsafeData(own) {
		t.Errorf("intern(%q) kept the delivery's string", own)
	}
	if got := w.intern("zz"); got != "zz" {
		t.Errorf("intern of an id not wanted: %q", got)
	}
}

// A hold keeps of each message it holds a few dozen bytes, what the read
// keeps of every delivery (its tag and base id) included: 71 here, of
// 100,000 deliveries all selected, read and held. With three maps keyed
// by id (and each delivery's own copy of its id) it was 203.
func TestAHoldKeepsAFewBytesAMessageItHolds(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	const n = 100_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%036d", i)
	}
	store, err := newHeldStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.close()
	body := []byte("{}")
	before := liveHeap()
	want := newWanted(ids)
	r := &Replay{queue: "q", held: &heldSources{want: want, refs: make([]heldRef, len(want.ids)), store: store}}
	p := newPassing("q", want, "r1", store)
	for i := range n {
		p.take(amqp.Delivery{DeliveryTag: uint64(i + 1), MessageId: fmt.Sprintf("%036d", i), Body: body})
	}
	out := r.sortHeld(p)
	p.sums = nil // reported: a streamed hold drops each sum as it reports it
	grew := int64(liveHeap()) - int64(before)
	if len(out) != n {
		t.Fatalf("held %d of %d", len(out), n)
	}
	out = nil
	t.Logf("%d held: %.1f MB, %d bytes a message", n, float64(grew)/1e6, grew/n)
	if per := grew / n; per > 96 {
		t.Errorf("%d bytes a message held, want at most 96", per)
	}
	runtime.KeepAlive(p)
	runtime.KeepAlive(r)
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }

// liveHeap is the live heap after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
