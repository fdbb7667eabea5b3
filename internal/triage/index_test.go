package triage

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

// sameInstants makes the times of t comparable by reflect.DeepEqual: the
// index keeps each time's instant and its zone's name and offset, not the
// *time.Location it came with.
func sameInstants(t Triaged) Triaged {
	fix := func(x *time.Time) {
		if !x.IsZero() {
			name, off := x.Zone()
			*x = x.In(time.FixedZone(name, off))
		}
	}
	fix(&t.Message.Properties.Timestamp)
	fix(&t.DiedAt)
	if t.Deaths != nil {
		t.Deaths = append([]Death(nil), t.Deaths...)
		for i := range t.Deaths {
			fix(&t.Deaths[i].Time)
		}
	}
	return t
}

func checkPacked(t *testing.T, x *Index, want []Triaged) {
	t.Helper()
	if x.Len() != len(want) {
		t.Fatalf("the index holds %d entries, want %d", x.Len(), len(want))
	}
	for i := range want {
		got := x.At(i)
		if !reflect.DeepEqual(sameInstants(got), sameInstants(want[i])) {
			t.Fatalf("entry %d unpacks differently:\n got %+v\nwant %+v", i, got, want[i])
		}
	}
}

// TestIndexUnpacksWhatWasAppended: every index entry of a streamed read
// comes back from the packed index as it went in, and reads its whole
// message back the same way.
func TestIndexUnpacksWhatWasAppended(t *testing.T) {
	batch, top, red, s := spilledSynthetic(400)
	x := NewIndex(0)
	var entries []Triaged
	var cost int64
	if _, err := InspectEach(context.Background(), sliceReader{top: top, msgs: batch.Messages}, batch.Queue, BrowseOptions{},
		StreamOptions{Redactor: red, Each: func(t *Triaged) (bool, error) {
			e := s.Index(*t)
			entries = append(entries, e)
			cost += x.Append(&e)
			return true, nil
		}}); err != nil {
		t.Fatal(err)
	}
	checkPacked(t, x, entries)
	for _, i := range []int{0, 1, 2, 3, 399} {
		got, err := x.At(i).Whole()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := entries[i].Whole()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("entry %d reads back a different whole message", i)
		}
	}
	var old int64
	for i := range entries {
		old += IndexCost(&entries[i])
	}
	t.Logf("an entry costs %d bytes packed, %d in a slice", cost/int64(len(entries)), old/int64(len(entries)))
	if per := cost / int64(len(entries)); per > 160 || per*4 > old/int64(len(entries)) {
		t.Errorf("an entry costs %d bytes packed, %d in a slice: not the tens of bytes an entry the index is for", per, old/int64(len(entries)))
	}
}

// TestIndexKeepsEveryField: an entry with every field the index keeps set,
// the rare ones included (zones, decoding, other headers, long strings).
func TestIndexKeepsEveryField(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	at := time.Date(2026, 12, 4, 19, 0, 0, 123456789, paris)
	full := Triaged{
		ID: "id-1",
		Message: Message{Queue: "q", Position: 7, Redelivered: true, Exchange: "x", RoutingKey: "rk",
			Properties: Properties{MessageID: "id-1", CorrelationID: "c-1", ContentType: "application/json",
				ContentEncoding: "gzip", Type: "t", AppID: "app", UserID: "u", ReplyTo: "r", Expiration: "60000",
				Timestamp: at.UTC(), Priority: 9, DeliveryMode: 2},
			Headers: Headers{"x-first-death-queue": []byte("not a string")}},
		Envelope: Envelope{IsJSON: true, MessageID: "id-1", EventType: "order.placed", SchemaVersion: "2",
			OccurredAt: "2026-12-04T19:00:00+01:00", CorrelationID: "c-1", TraceID: "tid", TraceParent: "tp",
			Failure: &Failure{ReasonCode: "TIMEOUT", Consumer: "billing", ConsumerVersion: "1.2", Attempt: -3,
				FirstFailedAt: "a", LastFailedAt: strings.Repeat("é", 300)}},
		Deaths: []Death{{Queue: "orders", Reason: ReasonRejected, Count: 3, Time: at, Exchange: "orders.x",
			RoutingKeys: []string{"a", "b"}, OriginalExpiration: "5"}, {Queue: "retry", Reason: ReasonExpired, Time: at.Local()}},
		Reason: ReasonRejected, ReasonCode: "TIMEOUT", ExceptionType: "E", ThrownAt: "at f()",
		Attempts: 4, DeliveryCount: 21, DiedAt: at, PayloadBytes: 1 << 40, Binary: true, Redactions: 2,
		Decoding: &BodyDecoding{Encoding: "gzip", EncodedBytes: 10, DecodedBytes: 100, Truncated: true, Error: "e"},
		TraceID:  "0af7651916cd43dd8448eb211c80319c", TimelineRedactions: 1,
		origin: &origin{route: Route{Exchange: "orders.x", RoutingKey: "order.placed"}, known: true},
	}
	plain := Triaged{ID: "", Message: Message{Position: 9, Headers: Headers{"x-first-death-queue": "orders"}}}
	x := NewIndex(0)
	want := []Triaged{full, plain}
	for i := range want {
		x.Append(&want[i])
	}
	checkPacked(t, x, want)
}

// TestIndexSpansChunks: entries past one chunk, and one larger than a
// chunk, come back whole.
func TestIndexSpansChunks(t *testing.T) {
	x := NewIndex(0)
	var want []Triaged
	for i := range 30000 {
		e := Triaged{ID: fmt.Sprintf("bench-%07d", i), Message: Message{Position: i, Queue: "q"},
			Reason: ReasonPublished, ReasonCode: "TIMEOUT", DiedAt: time.Unix(int64(i), 0).UTC()}
		if i == 20000 {
			e.Envelope.OccurredAt = strings.Repeat("x", 3*indexChunk)
		}
		want = append(want, e)
		x.Append(&want[i])
	}
	if len(x.chunks) < 3 {
		t.Fatalf("%d chunks: the test does not cross a chunk", len(x.chunks))
	}
	checkPacked(t, x, want)
}

// FuzzIndexRoundTrip: whatever strings and numbers an entry holds, it
// unpacks as it was packed.
func FuzzIndexRoundTrip(f *testing.F) {
	f.Add("id", "id", "order.placed", "TIMEOUT", "", int64(3), int64(1700000000), 2, uint8(1))
	f.Add("", "x", "", "", "q", int64(-1), int64(-62135596800), 0, uint8(0))
	f.Add("a", "2026-01-02T03:04:05.123Z", "2026-01-02T03:04:05+01:00", "", "", int64(0), int64(0), 0, uint8(0))
	f.Add("a", "2026-01-02T03:04:05.120Z", "2026-01-02T03:04:05-00:00", "", "", int64(0), int64(0), 0, uint8(0))
	f.Fuzz(func(t *testing.T, id, msgID, event, code, queue string, count, sec int64, deaths int, prio uint8) {
		if deaths < 0 || deaths > 5 {
			deaths = 1
		}
		when := time.Unix(sec, 0).UTC()
		e := Triaged{ID: id, Message: Message{Queue: queue, Properties: Properties{MessageID: msgID, Priority: prio}},
			Envelope: Envelope{MessageID: msgID, EventType: event, OccurredAt: msgID, CorrelationID: event,
				Failure: &Failure{LastFailedAt: event, FirstFailedAt: msgID}},
			ReasonCode: code, Attempts: int(count), DiedAt: when}
		for range deaths {
			e.Deaths = append(e.Deaths, Death{Queue: queue, Reason: Reason(code), Count: count, Time: when, RoutingKeys: []string{event}})
		}
		x := NewIndex(0)
		want := []Triaged{e, e}
		x.Append(&want[0])
		x.Append(&want[1])
		checkPacked(t, x, want)
	})
}

// TestAMillionParkedMessagesFitTheTUIsIndexBudget: messages shaped as a
// service parks them (the shape make bench loads: an id, a timestamp, one
// x-death, an envelope with a failure block and its time), indexed as the
// TUI's read indexes them, cost under 128 bytes an entry: a million fit
// the TUI's default index budget of 128 MiB (ui.DefaultIndexBudget).
func TestAMillionParkedMessagesFitTheTUIsIndexBudget(t *testing.T) {
	const n = 20000
	codes := []string{"VALIDATION_FAILED", "TIMEOUT", "NOT_FOUND", "CONFLICT", "UPSTREAM_5XX"}
	died := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	msgs := make([]Message, n)
	for i := range msgs {
		id, at := fmt.Sprintf("bench-%07d", i), died.Add(time.Duration(i)*time.Millisecond)
		body := fmt.Sprintf(`{"message_id":%q,"event_type":"order.placed","schema_version":"2","failure":{"reason_code":%q,"consumer":"billing","attempt":3,"last_failed_at":%q},"data":{"pad":"%s"}}`,
			id, codes[i%len(codes)], at.Format(time.RFC3339Nano), strings.Repeat("x", 800))
		msgs[i] = Message{Queue: "bench.dlq", Position: i, RoutingKey: "bench.dlq",
			Properties: Properties{MessageID: id, Timestamp: at, ContentType: "application/json", DeliveryMode: 2},
			Headers:    Headers{"x-death": deathsHeader(xdeath("orders", "rejected", 3, at, "orders.x", "order.placed"))["x-death"]},
			Body:       []byte(body)}
	}
	top := Topology{Queues: []Queue{{Name: "bench.dlq", Type: QueueClassic}}}
	s := NewSpilled(memBodies{}, redact.New())
	x := NewIndex(n)
	var cost int64
	if _, err := InspectEach(context.Background(), sliceReader{top: top, msgs: msgs}, "bench.dlq", BrowseOptions{},
		StreamOptions{Redactor: redact.New(), Each: func(t *Triaged) (bool, error) {
			e := s.Index(*t)
			cost += x.Append(&e)
			return true, nil
		}}); err != nil {
		t.Fatal(err)
	}
	if x.Len() != n {
		t.Fatalf("indexed %d of %d", x.Len(), n)
	}
	per := float64(cost) / n
	t.Logf("%.1f bytes an entry: %.1f MiB for a million", per, per*1e6/(1<<20))
	if per*1e6 > 128<<20 {
		t.Errorf("%.1f bytes an entry: a million would take %.1f MiB, over the TUI's 128 MiB", per, per*1e6/(1<<20))
	}
	if got := x.At(n - 1); got.ID != "bench-0019999" || got.Envelope.Failure == nil || got.Envelope.Failure.LastFailedAt != died.Add((n-1)*time.Millisecond).Format(time.RFC3339Nano) {
		t.Errorf("the last entry unpacks as %+v", got)
	}
}

// BenchmarkIndexAt: what a filter or a regrouping pays for each entry of
// a packed read it reads (a million: this times 1e6).
func BenchmarkIndexAt(b *testing.B) {
	x := NewIndex(0)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 100000 {
		e := Triaged{ID: fmt.Sprintf("bench-%07d", i), Message: Message{Position: i, Queue: "bench.dlq",
			Properties: Properties{MessageID: fmt.Sprintf("bench-%07d", i), Timestamp: at, ContentType: "application/json"}},
			Envelope: Envelope{IsJSON: true, MessageID: fmt.Sprintf("bench-%07d", i), EventType: "order.placed",
				Failure: &Failure{ReasonCode: "TIMEOUT", LastFailedAt: at.Format(time.RFC3339Nano)}},
			Deaths: []Death{{Queue: "orders", Reason: ReasonRejected, Count: 3, Time: at, RoutingKeys: []string{"order.placed"}}},
			Reason: ReasonRejected, ReasonCode: "TIMEOUT", DiedAt: at}
		x.Append(&e)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if t := x.At(i % x.Len()); t.ReasonCode != "TIMEOUT" {
			b.Fatal(t.ReasonCode)
		}
		i++
	}
}
