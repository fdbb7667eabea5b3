package triage

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestIdentify(t *testing.T) {
	t1 := mustTime("2026-11-30T10:00:00Z")
	body := []byte(`{"order":42}`)
	plain := Message{Body: body, Headers: Headers{"tenant": "acme"}}
	redelivered := Message{Body: body, Redelivered: true, Position: 9, Headers: Headers{
		"tenant": "acme", "x-death": []any{xdeath("q", "rejected", 3, t1, "", "q")}, "x-delivery-count": int64(4),
		"x-first-death-queue": "q", "x-first-death-reason": "rejected", "x-first-death-exchange": "",
		"x-last-death-queue": "q", "x-last-death-reason": "rejected", "x-last-death-exchange": "",
		"x-received-from": []any{Headers{"uri": "amqp://peer"}}, "dlqt-replay-id": "r1", "dlqt-attempts": int64(2),
		"X-Last-Death-Something-New": "4.x", "x-acquired-count": int64(1), "dlqt-replayed-at": mustTime("2026-11-30T11:00:00Z"),
		"dlqt-full-scan": "fs-0123456789abcdef",
	}}
	hashed := Identify([]Message{plain}, nil)[0]
	if !regexp.MustCompile(`^sha256:[0-9a-f]{32}$`).MatchString(hashed) {
		t.Fatalf("content id %q", hashed)
	}

	tests := []struct {
		name string
		ms   []Message
		envs []Envelope
		want []string
	}{
		{"AMQP message_id first", []Message{{Properties: Properties{MessageID: "amqp-1"}}}, []Envelope{{MessageID: "env-1"}}, []string{"amqp-1"}},
		{"envelope message_id next", []Message{{Body: body}}, []Envelope{{IsJSON: true, MessageID: "env-1"}}, []string{"env-1"}},
		{"fewer envelopes than messages", []Message{{Properties: Properties{MessageID: "a"}}, plain}, nil, []string{"a", hashed}},
		{"broker bookkeeping does not change the hash", []Message{redelivered}, nil, []string{hashed}},
		{"duplicates get occurrence suffixes", []Message{
			{Properties: Properties{MessageID: "m"}}, {Properties: Properties{MessageID: "n"}},
			{Properties: Properties{MessageID: "m"}}, {Properties: Properties{MessageID: "m"}},
		}, nil, []string{"m", "n", "m#2", "m#3"}},
		{"identical bodies without ids", []Message{plain, redelivered, plain}, nil, []string{hashed, hashed + "#2", hashed + "#3"}},
		{"a suffix never collides with a real id", []Message{
			{Properties: Properties{MessageID: "m"}}, {Properties: Properties{MessageID: "m#2"}}, {Properties: Properties{MessageID: "m"}},
		}, nil, []string{"m", "m#2", "m#3"}},
		{"ids are sanitised", []Message{{Properties: Properties{MessageID: "id\x1b[2J"}}}, nil, []string{`id\x1b[2J`}},
		{"blank message_id falls through", []Message{{Properties: Properties{MessageID: "  "}}}, []Envelope{{MessageID: "env"}}, []string{"env"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Identify(tc.ms, tc.envs)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Identify = %q, want %q", got, tc.want)
			}
		})
	}

	differs := map[string]Message{
		"body":           {Body: []byte(`{"order":43}`), Headers: Headers{"tenant": "acme"}},
		"stable header":  {Body: body, Headers: Headers{"tenant": "globex"}},
		"extra header":   {Body: body, Headers: Headers{"tenant": "acme", "x-retry-count": int64(1)}},
		"header type":    {Body: body, Headers: Headers{"tenant": true}},
		"property":       {Body: body, Headers: Headers{"tenant": "acme"}, Properties: Properties{CorrelationID: "c"}},
		"timestamp":      {Body: body, Headers: Headers{"tenant": "acme"}, Properties: Properties{Timestamp: t1}},
		"key not value":  {Body: body, Headers: Headers{"tenantacme": ""}},
		"nested":         {Body: body, Headers: Headers{"tenant": Headers{"acme": nil}}},
		"body vs header": {Body: append(append([]byte{}, body...), "tenant"...), Headers: Headers{"acme": nil}},
	}
	for name, m := range differs {
		if id := Identify([]Message{m}, nil)[0]; id == hashed {
			t.Errorf("%s: different message hashed alike: %s", name, id)
		}
	}

	// The same header read from AMQP (int64, []byte) or from a snapshot file
	// (float64, string) is the same message; so is any map iteration order.
	amqp := Message{Body: body, Headers: Headers{"n": int64(7), "s": []byte("x"), "l": []any{int32(1), "a"}, "t": Headers{"b": 1.5, "a": "z"}}}
	snap := Message{Body: body, Headers: Headers{"t": map[string]any{"a": "z", "b": 1.5}, "l": []any{float64(1), []byte("a")}, "s": "x", "n": float64(7)}}
	first := Identify([]Message{amqp}, nil)[0]
	for range 20 {
		if got := Identify([]Message{snap}, nil)[0]; got != first {
			t.Fatalf("same content hashed differently: %s vs %s", got, first)
		}
	}
}

// suffixIDsReference is SuffixIDs as it was written first, with a map of
// the ids taken and one of the occurrences seen: the reference the
// one-map version must agree with.
func suffixIDsReference(base []string) []string {
	taken := make(map[string]bool, len(base))
	for _, id := range base {
		taken[id] = true
	}
	ids := make([]string, len(base))
	seen := make(map[string]int, len(base))
	for i, id := range base {
		seen[id]++
		n := seen[id]
		if n == 1 {
			ids[i] = id
			continue
		}
		cand := id + "#" + strconv.Itoa(n)
		for taken[cand] {
			n++
			cand = id + "#" + strconv.Itoa(n)
		}
		seen[id] = n
		taken[cand] = true
		ids[i] = cand
	}
	return ids
}

// SuffixIDs numbers every list of base ids as the reference does: ids
// that repeat, ids that already end in "#2", suffixes that collide.
func FuzzSuffixIDsAgreesWithTheReference(f *testing.F) {
	f.Add("a,b,a,a#2,a,b#3,b,b")
	f.Add("x#2,x,x,x#3,x")
	f.Add("")
	f.Fuzz(func(t *testing.T, list string) {
		base := strings.Split(list, ",")
		if got, want := SuffixIDs(base), suffixIDsReference(base); !slices.Equal(got, want) {
			t.Fatalf("SuffixIDs(%q) = %q, want %q", base, got, want)
		}
	})
}

// BenchmarkSuffixIDs numbers the base ids of a queue of 1,000,000 distinct
// messages, as a discard's sweep of the whole queue does: B/op is what the
// numbering allocates beside the ids it returns (8 MB of them).
func BenchmarkSuffixIDs(b *testing.B) {
	base := make([]string, 1_000_000)
	for i := range base {
		base[i] = fmt.Sprintf("m-%07d", i)
	}
	b.ReportAllocs()
	for b.Loop() {
		SuffixIDs(base)
	}
}
