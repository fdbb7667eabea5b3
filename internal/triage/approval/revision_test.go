package approval

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

func TestEdit(t *testing.T) {
	body := []byte(`{"id":"o-1","amount":10,"customer":{"zip":"1011"}}`)
	tests := []struct {
		name    string
		body    []byte
		sets    []string
		want    string
		changes []FieldChange
		err     error
	}{
		{"a number and a nested string", body, []string{"amount=999", `$.customer.zip="10115"`},
			`{"id":"o-1","amount":999,"customer":{"zip":"10115"}}`,
			[]FieldChange{{"amount", "10", "999"}, {"customer.zip", `"1011"`, `"10115"`}}, nil},
		{"a value that is not JSON is a string", body, []string{"note=call the customer"},
			`{"id":"o-1","amount":10,"customer":{"zip":"1011"},"note":"call the customer"}`,
			[]FieldChange{{"note", "", `"call the customer"`}}, nil},
		{"an object", body, []string{`customer={"zip":"2000","city":"Oslo"}`},
			`{"id":"o-1","amount":10,"customer":{"zip":"2000","city":"Oslo"}}`,
			[]FieldChange{{"customer", `{"zip":"1011"}`, `{"zip":"2000","city":"Oslo"}`}}, nil},
		{"a body that is not JSON", []byte("plain text"), []string{"a=1"}, "", nil, ErrNotJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sets []Set
			for _, s := range tc.sets {
				p, err := ParseSet(s)
				if err != nil {
					t.Fatal(err)
				}
				sets = append(sets, p)
			}
			got, changes, err := Edit(tc.body, sets)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if string(got) != tc.want || len(changes) != len(tc.changes) {
				t.Fatalf("got %s %+v, want %s %+v", got, changes, tc.want, tc.changes)
			}
			for i := range changes {
				if changes[i] != tc.changes[i] {
					t.Errorf("change %d = %+v, want %+v", i, changes[i], tc.changes[i])
				}
			}
		})
	}
	if _, err := ParseSet("no-equals"); err == nil {
		t.Error("PATH without =VALUE accepted")
	}
}

func TestApprovedRevisionsTakeTheLatestThatCounts(t *testing.T) {
	msg := triage.Triaged{ID: "m1", Message: triage.Message{Body: []byte(`{"a":1}`)}}
	rev := func(body string, proposal string, at time.Duration) triage.Recorded {
		r := NewRevision("v", "q", msg, []byte(body), nil, redact.New(), "alice", "fix", t0.Add(at))
		r.Proposal = proposal
		return triage.Recorded{Record: triage.Record{Action: triage.ActionEdit, Details: map[string]any{"revision": journaled(t, r)}}}
	}
	p := sample()
	rejected := New(GateEdit, "v", "q", []Named{{ID: "m1"}}, Plan{Revision: "x"}, nil, "alice", t0, 0)
	rs := records(t, p, decision(t, p, true, "carol", p.Hash()))
	rs = append(rs, records(t, rejected, decision(t, rejected, false, "carol", rejected.Hash()))...)
	tests := []struct {
		name string
		revs []triage.Recorded
		want string // body, "" none
	}{
		{"no proposal needed", []triage.Recorded{rev(`{"a":2}`, "", 0)}, `{"a":2}`},
		{"the latest wins", []triage.Recorded{rev(`{"a":2}`, "", 0), rev(`{"a":3}`, "", time.Second)}, `{"a":3}`},
		{"an approved proposal counts", []triage.Recorded{rev(`{"a":2}`, "", 0), rev(`{"a":4}`, p.ID, time.Second)}, `{"a":4}`},
		{"a rejected one does not", []triage.Recorded{rev(`{"a":2}`, "", 0), rev(`{"a":5}`, rejected.ID, time.Second)}, `{"a":2}`},
		{"a pending one does not", []triage.Recorded{rev(`{"a":6}`, "p-unknown", 0)}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ApprovedRevisions(append(append([]triage.Recorded{}, rs...), tc.revs...), "v", "q")
			if err != nil {
				t.Fatal(err)
			}
			if want := SHA256([]byte(tc.want)); tc.want != "" && got["m1"].SHA256After != want || tc.want == "" && got["m1"].ID != "" {
				t.Errorf("revision %+v, want the one of body %q", got["m1"], tc.want)
			}
			if tc.want != "" && got["m1"].SHA256Before != SHA256(msg.Message.Body) {
				t.Errorf("sha256 before %s", got["m1"].SHA256Before)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	before := []byte(`{"id":"o-1","amount":10,"customer":{"zip":"1011","tags":["a","b"]},"gone":true}`)
	after := []byte(`{"id":"o-1","amount":12,"customer":{"zip":"1011","tags":["a","c"],"city":"Oslo"}}`)
	want := []FieldChange{
		{"amount", "10", "12"},
		{"customer.city", "", `"Oslo"`},
		{"customer.tags.1", `"b"`, `"c"`},
		{"gone", "true", ""},
	}
	got := Diff(before, after)
	if len(got) != len(want) {
		t.Fatalf("diff %+v, want %+v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("change %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if d := Diff(before, before); len(d) != 0 {
		t.Errorf("no edit, diff %+v", d)
	}
}

// TestARevisionJournalsNoPayload: what is journaled of a revision is its
// hashes and the changed paths with the values the redactor masks; the
// edited body is never in its JSON.
func TestARevisionJournalsNoPayload(t *testing.T) {
	before := []byte(`{"amount":12,"password":"hunter2-s3cret","card":"4111111111111111","customer":{"email":"jane.doe@example.com"}}`)
	sets := []Set{{"amount", "7"}, {"customer.email", `"new.addr@example.org"`}, {"password", `"0ther-s3cret"`}}
	after, changes, err := Edit(before, sets)
	if err != nil {
		t.Fatal(err)
	}
	rev := NewRevision("v", "q", triage.Triaged{ID: "m1", Message: triage.Message{Body: before}}, after, changes, redact.New(), "alice", "fix", t0)
	raw, err := json.Marshal(rev)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", "0ther", "4111111111111111", "jane.doe", "new.addr"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the journaled revision shows %q: %s", secret, raw)
		}
	}
	want := []FieldChange{{"amount", "12", "7"}, {"customer.email", `"j***@example.com"`, `"n***@example.org"`}, {"password", `"[REDACTED]"`, `"[REDACTED]"`}}
	if len(rev.Changes) != len(want) {
		t.Fatalf("changes %+v, want %+v", rev.Changes, want)
	}
	for i := range want {
		if rev.Changes[i] != want[i] {
			t.Errorf("change %d = %+v, want %+v", i, rev.Changes[i], want[i])
		}
	}
	if rev.SHA256Before != SHA256(before) || rev.SHA256After != SHA256(after) || string(rev.Body) != string(after) {
		t.Errorf("revision %+v", rev)
	}
}

type bodies map[string][]byte

func (b bodies) RevisionBody(sum string) ([]byte, error) {
	if body, ok := b[sum]; ok {
		return body, nil
	}
	return nil, triage.ErrNotFound
}

// TestBodyOf: a replay takes a revision's body from the store, or inline
// from a journal written before bodies were kept apart, and refuses an
// inline body that does not hash to the revision's sha256_after.
func TestBodyOf(t *testing.T) {
	after := []byte(`{"a":2}`)
	kept := Revision{ID: "rev-1", SHA256After: SHA256(after)}
	if got, err := BodyOf(kept, bodies{SHA256(after): after}); err != nil || string(got) != string(after) {
		t.Errorf("kept apart: %s, %v", got, err)
	}
	if _, err := BodyOf(kept, bodies{}); !errors.Is(err, triage.ErrNotFound) {
		t.Errorf("a body the store lacks: %v", err)
	}
	inline := Revision{ID: "rev-0", SHA256After: SHA256(after), InlineBody: string(after)}
	if got, err := BodyOf(inline, bodies{}); err != nil || string(got) != string(after) {
		t.Errorf("inline: %s, %v", got, err)
	}
	inline.InlineBody = `{"a":3}`
	if _, err := BodyOf(inline, bodies{}); err == nil {
		t.Error("an inline body that does not hash to sha256_after was taken")
	}
}
