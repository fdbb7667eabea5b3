package triage_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/triagetest"
)

// codeFilter is a Where that takes one reason code (the filter package's
// expressions compile to such a matcher).
type codeFilter string

func (f codeFilter) Match(t triage.Triaged) bool { return t.ReasonCode == string(f) }
func (f codeFilter) Empty() bool                 { return f == "" }
func (f codeFilter) Exprs() []string             { return []string{"reason_code=" + string(f)} }
func (f codeFilter) String() string              { return "reason_code=" + string(f) }

// TestAMessageMatcherSelectsAsAWholeReadDoes: a message triaged alone, as
// a selecting hold reads it, is selected exactly when the same message in
// a whole read (Analyze) is, for groups by reason and code and a filter.
func TestAMessageMatcherSelectsAsAWholeReadDoes(t *testing.T) {
	top := triagetest.GraveyardTopology()
	when := triagetest.MustTime("2026-12-01T09:00:00Z")
	var msgs []triage.Message
	for i := range 60 {
		body := `{"order_id": 1}`
		if i%5 == 0 {
			body = `{"tenant": "acme", "n": 1}`
		}
		m := triage.Message{Queue: "nghia-dia", Properties: triage.Properties{MessageID: fmt.Sprintf("m-%d", i)}, Body: []byte(body),
			Headers: triage.Headers{}}
		switch i % 4 {
		case 0:
			m.Headers["x-death"] = []any{triagetest.XDeath("viec", "rejected", 1, when, "", "viec")}
			m.Headers["x-reason-code"] = "TIMEOUT"
		case 1:
			m.Headers["x-death"] = []any{triagetest.XDeath("viec2", "expired", 1, when, "", "viec2")}
		case 2:
			m.Headers["x-reason-code"] = "TIMEOUT" // published by an application
		case 3:
			m.Headers["x-reason-code"] = "BAD_INPUT"
		}
		msgs = append(msgs, m)
	}
	whole := triage.Analyze(triage.Batch{Vhost: "seed1", Queue: "nghia-dia", Messages: msgs}, top, nil)
	for _, s := range []string{"rejected/TIMEOUT", "expired", "published", "published/BAD_INPUT"} {
		key, err := triage.ParseGroupKey(s)
		if err != nil {
			t.Fatal(err)
		}
		// text~ and tenant= read the message's payload and headers: the
		// message triaged alone carries them whole, as a read's does.
		text, err := filter.ParseWhere([]string{"text~order_id"}, filter.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tenant, err := filter.ParseWhere([]string{"tenant=acme"}, filter.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, sel := range []triage.Selection{{Group: &key}, {Group: &key, Where: codeFilter("TIMEOUT")}, {Where: codeFilter("TIMEOUT")},
			{Group: &key, Where: text}, {Where: tenant}} {
			chose := sel.MessageMatcher(top)
			n := 0
			for i, m := range msgs {
				got, want := chose(m, whole[i].ID), sel.Matches(whole[i])
				if got != want {
					t.Fatalf("%s: alone %s is %v, in the whole read %v", sel, whole[i].ID, got, want)
				}
				if got {
					n++
				}
			}
			if n == 0 && (sel.Where == nil || sel.Where.String() == tenant.String()) {
				t.Errorf("%s selects nothing: the case proves nothing", sel)
			}
		}
	}
}

func TestFirstSeenTakesTheFirstOfEachIDAsSuffixIDsLeavesIt(t *testing.T) {
	base := []string{"a", "b", "a", "a#2", "c", "b", "a", "d", "a#2"}
	ids := triage.SuffixIDs(base)
	f := triage.NewFirstSeen()
	for i, id := range base {
		first := f.First(id)
		if first != (ids[i] == id && !slices.Contains(base[:i], id)) {
			t.Errorf("%d (%s, named %s): first %v", i, id, ids[i], first)
		}
		if first && ids[i] != id {
			t.Errorf("%d: FirstSeen takes %s as first, SuffixIDs names it %s", i, id, ids[i])
		}
	}
}
