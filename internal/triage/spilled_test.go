package triage

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

// memBodies is a Bodies in memory, as the spill store is on disk.
type memBodies map[int]Message

func (b memBodies) Message(pos int) (Message, error) {
	m, ok := b[pos]
	if !ok {
		return Message{}, errors.New("no such position")
	}
	return m, nil
}

// spilledSynthetic is syntheticBatch(n) with its topology and redactor,
// and a Spilled reading back from its messages in memory.
func spilledSynthetic(n int) (Batch, Topology, *redact.Redactor, *Spilled) {
	batch := syntheticBatch(n)
	top := seed002Topology()
	top.Queues = append(top.Queues, Queue{Name: batch.Queue, Type: QueueClassic})
	red := redact.New()
	bodies := memBodies{}
	for _, m := range batch.Messages {
		bodies[m.Position] = m
	}
	s := NewSpilled(bodies, red)
	s.UseTopology(top)
	return batch, top, red, s
}

// TestWholeDerivesTheSameMessage: an index entry read back is what the
// streamed inspection derived from the whole message, identity included
// (the stream gives repeated ids their occurrence suffix).
func TestWholeDerivesTheSameMessage(t *testing.T) {
	batch, top, red, s := spilledSynthetic(400)
	var full, index []Triaged
	_, err := InspectEach(context.Background(), sliceReader{top: top, msgs: batch.Messages}, batch.Queue, BrowseOptions{},
		StreamOptions{Redactor: red, Payloads: true, Each: func(t *Triaged) (bool, error) {
			full = append(full, *t)
			index = append(index, s.Index(*t))
			return true, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	suffixed := 0
	for i := range full {
		e := index[i]
		if e.Message.Body != nil || e.Payload != "" || e.Timeline != nil || !e.Indexed() {
			t.Fatalf("index entry %d keeps the body, payload or timeline", i)
		}
		if DiedIn(e) != DiedIn(full[i]) || FirstDied(e) != FirstDied(full[i]) || e.PayloadBytes != len(full[i].Message.Body) {
			t.Errorf("index entry %d: the fields the index serves differ", i)
		}
		back, err := e.Whole()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, full[i]) {
			t.Fatalf("message %d read back differs:\n got %+v\nwant %+v", i, back, full[i])
		}
		if len(back.ID) > 2 && back.ID[len(back.ID)-2] == '#' {
			suffixed++
		}
	}
	if suffixed == 0 {
		t.Error("the batch has no repeated ids: the test does not show the suffix kept")
	}
	// A spilled read renders no payloads (the TUI's): its entries read back
	// the same.
	var lean []Triaged
	if _, err := InspectEach(context.Background(), sliceReader{top: top, msgs: batch.Messages}, batch.Queue, BrowseOptions{},
		StreamOptions{Redactor: red, Each: func(t *Triaged) (bool, error) { lean = append(lean, s.Index(*t)); return true, nil }}); err != nil {
		t.Fatal(err)
	}
	for i := range lean {
		back, err := lean[i].Whole()
		if err != nil || !reflect.DeepEqual(back, full[i]) || lean[i].PayloadBytes != full[i].PayloadBytes {
			t.Fatalf("lean entry %d read back differs (%v)", i, err)
		}
	}
	if got, err := index[3].Whole(); err != nil || !reflect.DeepEqual(got, full[3]) {
		t.Errorf("index[3].Whole() = %v, %v", got.ID, err)
	}
	if _, err := NewSpilled(memBodies{}, red).Index(full[0]).Whole(); err == nil {
		t.Error("a message the store lacks read back without error")
	}
}

// BenchmarkIndexEntryBytes measures what an index entry of a 1 KiB parked
// message holds on the heap (bytes/entry), beside what IndexCost, the
// TUI's memory budget, counts for it (cost/entry).
func BenchmarkIndexEntryBytes(b *testing.B) {
	const n = 100000
	r := benchReader(n)
	s := NewSpilled(memBodies{}, nil)
	for b.Loop() {
		var kept []Triaged
		var cost int64
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := InspectEach(context.Background(), r, "bench.dlq", BrowseOptions{}, StreamOptions{Payloads: true,
			Each: func(t *Triaged) (bool, error) {
				e := s.Index(*t)
				cost += IndexCost(&e)
				kept = append(kept, e)
				return true, nil
			}})
		if err != nil {
			b.Fatal(err)
		}
		kept = kept[:len(kept):len(kept)]
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "bytes/entry")
		b.ReportMetric(float64(cost)/n, "cost/entry")
		runtime.KeepAlive(kept)
	}
}

// An index entry keeps the original route its whole message states, from
// its headers or its envelope, and answers OriginalRoute as the message
// would; a compressed body is not inflated for it as it is read: such an
// entry is read back when asked.
func TestAnIndexEntryKnowsItsOriginalRoute(t *testing.T) {
	s := NewSpilled(memBodies{}, nil)
	for _, tc := range []struct {
		name   string
		m      Message
		want   Route
		known  bool
		onRead bool
	}{
		{"headers", Message{Headers: Headers{"x-original-exchange": "ledger", "x-original-routingKey": "entry.posted"}, Body: []byte(`{}`)},
			Route{"ledger", "entry.posted"}, true, true},
		{"envelope", Message{Body: []byte(`{"original_exchange":"orders","original_routing_key":"order.created"}`)},
			Route{"orders", "order.created"}, true, true},
		{"nothing", Message{Body: []byte(`plain text`)}, Route{}, false, true},
		{"gzip", Message{Properties: Properties{ContentEncoding: "gzip"}, Body: []byte{0x1f, 0x8b}}, Route{}, false, false},
	} {
		whole := Triaged{Message: tc.m, Reason: ReasonPublished}
		e := s.Index(whole)
		if got := RoutedOnRead(e); got != tc.onRead {
			t.Errorf("%s: RoutedOnRead %v, want %v", tc.name, got, tc.onRead)
		}
		if !tc.onRead {
			continue
		}
		r, known := OriginalRoute(e)
		wr, wk := OriginalRoute(whole)
		if r != tc.want || known != tc.known || r != wr || known != wk {
			t.Errorf("%s: the entry's route %v %v, the message's %v %v, want %v %v", tc.name, r, known, wr, wk, tc.want, tc.known)
		}
	}
}

// The look before an envelope is decoded for its route passes every body
// from which decoding finds one: keys in any case, or written with escapes.
func FuzzMayStateRouteMissesNoRoute(f *testing.F) {
	for _, s := range []string{`{"original_exchange":"a"}`, `{"ORIGINAL_ROUTING_KEY":"k"}`, `{"Original_Exchange":"x"}`,
		`{"\u006friginal_exchange":"y"}`, `{"original_routing_\u212aey":"z"}`, `{"a":1}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, found := decodeEnvelopeRoute(body); found && !mayStateRoute(body) {
			t.Fatalf("%q states a route, but the look before decoding passed it over", body)
		}
	})
}
