package triage

import (
	"encoding/json"
	"testing"
)

// A selection reads back from the snake_case keys it is written with and
// from the Go-style keys journals held before.
func TestSelectionReadsBothKeyStyles(t *testing.T) {
	for _, raw := range []string{
		`{"IDs":["a"],"Group":{"Reason":"expired","Code":"","AnyCode":true}}`,
		`{"ids":["a"],"group":{"reason":"expired","code":"","any_code":true}}`,
	} {
		var s Selection
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			t.Fatal(err)
		}
		if len(s.IDs) != 1 || s.Group == nil || *s.Group != (GroupKey{Reason: "expired", AnyCode: true}) {
			t.Errorf("%s read as %+v %+v", raw, s, s.Group)
		}
	}
	out, _ := json.Marshal(Selection{IDs: []string{"a"}, Group: &GroupKey{Reason: "expired", AnyCode: true}})
	if string(out) != `{"ids":["a"],"group":{"reason":"expired","code":"","any_code":true}}` {
		t.Errorf("written as %s", out)
	}
}
