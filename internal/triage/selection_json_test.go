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

// TestIDsOfAGroupSelectOnlyThoseIDsOfThatGroup: a screen's group as shown is
// its ids with the group named, for the journal; together they select no
// more than either would.
func TestIDsOfAGroupSelectOnlyThoseIDsOfThatGroup(t *testing.T) {
	expired := GroupKey{Reason: ReasonExpired, AnyCode: true}
	sel := Selection{IDs: []string{"a", "c"}, Group: &expired}
	if err := sel.Validate(); err != nil {
		t.Fatalf("refused: %v", err)
	}
	ts := []Triaged{
		{ID: "a", Reason: ReasonExpired}, {ID: "b", Reason: ReasonExpired}, {ID: "c", Reason: ReasonRejected},
	}
	var got []string
	for _, t := range sel.Apply(ts) {
		got = append(got, t.ID)
	}
	if len(got) != 1 || got[0] != "a" {
		t.Fatalf("selected %v, want [a]", got)
	}
}
