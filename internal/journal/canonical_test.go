package journal

import (
	"bytes"
	"encoding/json"
	"testing"
)

// reference is the round trip seal made before canonicalJSON.
func reference(raw []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func checkCanonical(t *testing.T, raw []byte) {
	t.Helper()
	want, werr := reference(raw)
	got, gerr := canonicalJSON(nil, raw)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%q: the round trip says %v, canonicalJSON %v", raw, werr, gerr)
	}
	if werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("%q:\n got %s\nwant %s", raw, got, want)
	}
}

func TestCanonicalJSONIsTheRoundTrip(t *testing.T) {
	for _, raw := range []string{
		`{"b":1,"a":[1,2.50,"x<y>&\u2028"],"c":{"z":null,"y":true}}`,
		`{"a":1,"a":2}`, `[]`, `{}`, `"é\ud800"`, `1e21`, `1e-7`, `123456789012345678901`, `-0`,
		`{"items":[{"id":"m-1","route":{"exchange":"","routing_key":"q"},"original":false}]}`,
		`1e999`, `{"a":}`, `[1,]`, `{"a":1} x`,
	} {
		checkCanonical(t, []byte(raw))
	}
}

func FuzzCanonicalJSONIsTheRoundTrip(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1,2.5]}`, `{"a":1,"a":{"b":"\u00e9"}}`, `[null,true,false,-1.5e300]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkCanonical(t, raw) })
}

// TestALargeDetailIsSealedAsItReadsBack: a detail past rawDetail is kept
// as its canonical JSON, and the entry's stored bytes and hash are the
// ones the round trip through Go values gave.
func TestALargeDetailIsSealedAsItReadsBack(t *testing.T) {
	items := make([]map[string]any, 5000)
	for i := range items {
		items[i] = map[string]any{"id": i, "route": map[string]string{"routing_key": "q", "exchange": ""}, "original": i%2 == 0}
	}
	e := Entry{Action: "replay", Details: map[string]any{"plan": map[string]any{"items": items, "queue": "q"}, "step": "planned"}}
	got, data, err := seal(e)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Details["plan"].(json.RawMessage); !ok {
		t.Fatalf("the plan's detail is a %T, not kept as its JSON", got.Details["plan"])
	}
	if got.Details["step"] != "planned" {
		t.Errorf("a small detail reads %v", got.Details["step"])
	}
	// the old seal: details decoded into Go values, then the entry hashed
	old := e
	raw, _ := json.Marshal(old.Details)
	old.Details = nil
	if err := json.Unmarshal(raw, &old.Details); err != nil {
		t.Fatal(err)
	}
	old.Time = old.Time.UTC()
	old.MessageIDs = []string{}
	body, err := hashedBody(old)
	if err != nil {
		t.Fatal(err)
	}
	if want := hashBody(old.PrevHash, body); got.Hash != want {
		t.Fatalf("hash %s, the round trip's %s", got.Hash, want)
	}
	var back Entry
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if h, err := hashOf(back); err != nil || h != got.Hash {
		t.Fatalf("the stored entry hashes to %s (%v), sealed as %s", h, err, got.Hash)
	}
}
