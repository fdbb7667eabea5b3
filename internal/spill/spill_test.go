package spill

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// everyKind is a message with a header of each value type triage.Headers
// allows, nested, and short strings that are not UTF-8.
func everyKind(pos int) triage.Message {
	at := time.Date(2026, 11, 30, 10, 0, 0, 123456789, time.UTC)
	return triage.Message{
		Queue: "orders.parking", Position: pos, Redelivered: true, Exchange: "orders.dlx", RoutingKey: "order.\xffcreated",
		Properties: triage.Properties{MessageID: "m-\xfe1", CorrelationID: "c", ContentType: "application/json",
			ContentEncoding: "gzip", Type: "t", AppID: "a", UserID: "guest", ReplyTo: "r", Expiration: "60000",
			Timestamp: at.Truncate(time.Second), Priority: 9, DeliveryMode: 2},
		Headers: triage.Headers{
			"s": "text", "bad": "\xff\xfe", "i": int64(math.MinInt64), "big": int64(math.MaxInt64), "f": 1.5,
			"b": true, "t": at, "raw": []byte{0, 1, 2}, "nil": nil, "empty": "",
			"x-death": []any{triage.Headers{"count": int64(3), "reason": "rejected", "time": at,
				"routing-keys": []any{"order.created"}, "deep": triage.Headers{"l": []any{int64(1), 2.5, false, nil}}}},
			"emptytable": triage.Headers{}, "emptylist": []any{},
		},
		Body: []byte(`{"order":"\u00e9"}` + "\x00\xff"),
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	cases := map[string]triage.Message{
		"every kind":   everyKind(7),
		"zero":         {},
		"empty body":   {Body: []byte{}, Headers: triage.Headers{}},
		"binary body":  {Queue: "q", Position: 1 << 40, Body: []byte{0xff, 0, 0xfe}},
		"no timestamp": {Queue: "q", Properties: triage.Properties{MessageID: "x"}, Body: []byte("x")},
		"old time": {Properties: triage.Properties{Timestamp: time.Unix(-1e9, 0).UTC()},
			Headers: triage.Headers{"t": time.Unix(-5, 7).UTC()}},
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) { checkRoundTrip(t, m) })
	}
}

func TestDecodeRejectsDamage(t *testing.T) {
	rec, err := Encode(everyKind(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{0, 1, 10, 40} {
		if _, err := Decode(rec[:cut]); err == nil {
			t.Errorf("a record cut at %d bytes decoded without error", cut)
		}
	}
}

// fuzzMessage builds a message from fuzz input: every header value type,
// nested, strings of any bytes.
func fuzzMessage(data []byte) triage.Message {
	g := &gen{data: data}
	m := triage.Message{
		Queue: g.str(), Position: int(g.u64() % (1 << 40)), Redelivered: g.bit(), Exchange: g.str(), RoutingKey: g.str(),
		Properties: triage.Properties{MessageID: g.str(), ContentType: g.str(), Type: g.str(), ReplyTo: g.str(),
			Priority: g.byte(), DeliveryMode: g.byte()},
	}
	if g.bit() {
		m.Properties.Timestamp = time.Unix(int64(g.u64()%(1<<34)), 0).UTC()
	}
	if g.bit() {
		m.Headers = g.table(0)
	}
	if g.bit() {
		m.Body = []byte(g.str())
	}
	return m
}

type gen struct{ data []byte }

func (g *gen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *gen) bit() bool { return g.byte()&1 == 1 }

func (g *gen) u64() uint64 {
	var b [8]byte
	for i := range b {
		b[i] = g.byte()
	}
	return binary.LittleEndian.Uint64(b[:])
}

func (g *gen) str() string {
	n := min(int(g.byte()%16), len(g.data))
	s := string(g.data[:n])
	g.data = g.data[n:]
	return s
}

func (g *gen) value(depth int) any {
	switch g.byte() % 10 {
	case 0:
		return nil
	case 1:
		return g.str()
	case 2:
		return int64(g.u64())
	case 3:
		f := math.Float64frombits(g.u64())
		if math.IsNaN(f) { // NaN is never DeepEqual to itself
			return 0.0
		}
		return f
	case 4:
		return g.bit()
	case 5:
		return time.Unix(int64(g.u64()%(1<<34)), int64(g.u64()%1e9)).UTC()
	case 6:
		return append([]byte{}, g.str()...)
	case 7:
		if depth < 3 {
			l := []any{}
			for range g.byte() % 4 {
				l = append(l, g.value(depth+1))
			}
			return l
		}
	case 8:
		if depth < 3 {
			return g.table(depth + 1)
		}
	}
	return g.str()
}

func (g *gen) table(depth int) triage.Headers {
	h := triage.Headers{}
	for range g.byte() % 6 {
		h["k"+string(rune('a'+g.byte()%26))] = g.value(depth)
	}
	return h
}

func FuzzEncodeRoundTrip(f *testing.F) {
	f.Add([]byte("seed"))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 0xff, 7, 7, 7, 8, 8, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRoundTrip(t, fuzzMessage(data))
		_, _ = Decode(data) // any bytes: an error, never a panic
	})
}

func TestStoreReadsBackEveryMessage(t *testing.T) {
	s, err := Create(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 2*chunkMessages + 3 // two committed chunks and a pending tail
	for i := range n {
		if err := s.Put(everyKind(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, pos := range []int{0, chunkMessages, n - 1} { // committed, committed, pending
		got, err := s.Message(pos)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, everyKind(pos)) {
			t.Errorf("position %d came back as %#v", pos, got)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Message(n - 1); err != nil || got.Position != n-1 {
		t.Errorf("after Flush: %v, %v", got.Position, err)
	}
	if _, err := s.Message(n); err == nil {
		t.Error("a position never stored read back without error")
	}
}

func TestCloseRemovesTheFileUnlessKept(t *testing.T) {
	for _, keep := range []bool{false, true} {
		dir := t.TempDir()
		s, err := Create(dir, keep)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(s.Path())
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", st.Mode().Perm())
		}
		if err := s.Put(everyKind(0)); err != nil {
			t.Fatal(err)
		}
		kept, err := s.Close()
		if err != nil {
			t.Fatal(err)
		}
		_, statErr := os.Stat(s.Path())
		switch {
		case !keep && (kept != "" || !os.IsNotExist(statErr)):
			t.Errorf("not kept: Close returned %q, file: %v", kept, statErr)
		case keep && (kept != s.Path() || statErr != nil):
			t.Errorf("kept: Close returned %q, file: %v", kept, statErr)
		}
		if _, err := s.Message(0); err != ErrClosed {
			t.Errorf("read after Close: %v, want ErrClosed", err)
		}
		if keep { // a kept file holds the messages, the pending ones too
			s2 := reopen(t, kept)
			if got, err := s2.Message(0); err != nil || !reflect.DeepEqual(got, everyKind(0)) {
				t.Errorf("kept file: %v, %v", got.Position, err)
			}
			s2.Close()
		}
		if _, err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}
}

func reopen(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCreateHonoursXDGCacheHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	s, err := Create("", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if filepath.Dir(s.Path()) != filepath.Join(home, "dlqt") {
		t.Errorf("store at %s, want under %s/dlqt", s.Path(), home)
	}
}

// TestReadsWhileTheBrowseWrites: a message is readable as soon as Put
// returns, queued, being written or committed, while more are put.
func TestReadsWhileTheBrowseWrites(t *testing.T) {
	s, err := Create(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 6 * chunkMessages
	put := make(chan int, n)
	go func() {
		defer close(put)
		for i := range n {
			if err := s.Put(everyKind(i)); err != nil {
				t.Error(err)
				return
			}
			put <- i
		}
	}()
	for i := range put {
		for _, pos := range []int{i, i / 2, 0} {
			got, err := s.Message(pos)
			if err != nil || got.Position != pos || !reflect.DeepEqual(got, everyKind(pos)) {
				t.Fatalf("position %d while %d were put: %v", pos, i+1, err)
			}
		}
	}
}

// checkRoundTrip fails t unless m encodes and decodes back to itself.
func checkRoundTrip(t *testing.T, m triage.Message) {
	t.Helper()
	rec, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip changed the message:\n got %#v\nwant %#v", got, m)
	}
}
