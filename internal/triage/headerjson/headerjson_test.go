package headerjson

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

func decode(t *testing.T, b []byte) triage.Headers {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var raw triage.Headers
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return raw
}

// TestAppendTaggedWritesWhatTagMarshals: the fast writer's document reads
// as the json.Marshal of Tag does, and back to the same values.
func TestAppendTaggedWritesWhatTagMarshals(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 0, 0, 5, time.UTC)
	for name, h := range map[string]triage.Headers{
		"nil":   nil,
		"empty": {},
		"every kind": {"s": "a \"quoted\" <b>&\\ \x01\u2028 é", "bad": "\xff", "i": int64(-7), "f": 1e21, "g": 0.1, "tiny": 5e-324,
			"nan": math.NaN(), "inf": math.Inf(-1), "b": false, "t": at, "raw": []byte{0, 255}, "nil": nil,
			"list": []any{int64(1), "x", []any{}, triage.Headers{"k": 2.5}}, "table": triage.Headers{"in": triage.Headers{}},
			"\x7fkey é": "v", "\xffkey": "bytes", "\x00b64:AA==": "looks escaped", "\x00b64:": int64(1),
			"nested": triage.Headers{"\xfe": []any{triage.Headers{"\xc3": "x"}}}},
	} {
		t.Run(name, func(t *testing.T) {
			fast := AppendTagged(nil, h)
			if !json.Valid(fast) {
				t.Fatalf("not JSON: %s", fast)
			}
			slow, err := json.Marshal(Tag(h))
			if err != nil {
				t.Fatal(err)
			}
			if a, b := decode(t, fast), decode(t, slow); !reflect.DeepEqual(a, b) {
				t.Fatalf("documents differ:\n fast %s\n slow %s", fast, slow)
			}
			back, err := Untag(decode(t, fast))
			if err != nil {
				t.Fatal(err)
			}
			nan, hasNaN := h["nan"].(float64)
			if hasNaN { // NaN is never DeepEqual to itself: compare it apart
				if got, _ := back["nan"].(float64); !math.IsNaN(got) || !math.IsNaN(nan) {
					t.Errorf("NaN came back as %v", back["nan"])
				}
				delete(back, "nan")
				h = maps(h)
				delete(h, "nan")
			}
			if !reflect.DeepEqual(back, h) {
				t.Errorf("round trip:\n got %#v\nwant %#v", back, h)
			}
		})
	}
}

func maps(h triage.Headers) triage.Headers {
	out := triage.Headers{}
	for k, v := range h {
		out[k] = v
	}
	return out
}

// FuzzKeysAndStringsComeBackAsTheyWere: any bytes as a key, a string value
// and a nested key read back unchanged, through both writers.
func FuzzKeysAndStringsComeBackAsTheyWere(f *testing.F) {
	f.Add("x-death", "rejected", "count")
	f.Add("\xff\xfe", "\x00b64:", "\xc3")
	f.Add(keyPrefix+"AA==", "é\u2028", "")
	f.Fuzz(func(t *testing.T, key, value, nested string) {
		h := triage.Headers{key: value, "t": triage.Headers{nested: []any{value, key}}}
		slow, err := json.Marshal(Tag(h))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range [][]byte{AppendTagged(nil, h), slow} {
			back, err := Untag(decode(t, doc))
			if err != nil {
				t.Fatalf("%s: %v", doc, err)
			}
			if !reflect.DeepEqual(back, h) {
				t.Fatalf("round trip through %s:\n got %#v\nwant %#v", doc, back, h)
			}
		}
	})
}
