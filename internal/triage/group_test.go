package triage

import (
	"reflect"
	"testing"
	"time"
)

func TestGroupMessages(t *testing.T) {
	t1, t2, t3 := mustTime("2026-11-30T10:00:00Z"), mustTime("2026-11-30T11:00:00Z"), mustTime("2026-11-30T12:00:00Z")
	tr := func(r Reason, code, eventType string, died time.Time) Triaged {
		return Triaged{Reason: r, ReasonCode: code, DiedAt: died, Envelope: Envelope{EventType: eventType}}
	}
	ts := []Triaged{
		tr(ReasonRejected, "tax_missing", "invoice.issue", t2),  // 0
		tr(ReasonPublished, "", "", time.Time{}),                // 1
		tr(ReasonRejected, "tax_missing", "invoice.void", t1),   // 2
		tr(ReasonExpired, "", "", t3),                           // 3
		tr(ReasonRejected, "tax_missing", "invoice.issue", t3),  // 4
		tr(ReasonPublished, "", "order.created", t1),            // 5
		tr(ReasonRejected, "", "", time.Time{}),                 // 6
		tr(ReasonPublished, "max_retries", "order.created", t2), // 7
		tr(ReasonRejected, "tax_missing", "", time.Time{}),      // 8
	}
	want := []Group{
		{Reason: ReasonRejected, ReasonCode: "tax_missing", Count: 4, Oldest: t1, Newest: t3, EventTypes: []string{"invoice.issue", "invoice.void"}, Members: []int{0, 2, 4, 8}},
		{Reason: ReasonPublished, ReasonCode: "", Count: 2, Oldest: t1, Newest: t1, EventTypes: []string{"order.created"}, Members: []int{1, 5}},
		{Reason: ReasonExpired, ReasonCode: "", Count: 1, Oldest: t3, Newest: t3, EventTypes: []string{}, Members: []int{3}},
		{Reason: ReasonPublished, ReasonCode: "max_retries", Count: 1, Oldest: t2, Newest: t2, EventTypes: []string{"order.created"}, Members: []int{7}},
		{Reason: ReasonRejected, ReasonCode: "", Count: 1, EventTypes: []string{}, Members: []int{6}},
	}
	got := GroupMessages(ts)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("GroupMessages =\n%+v\nwant\n%+v", got, want)
	}
	if got := GroupMessages(nil); len(got) != 0 {
		t.Fatalf("empty input: %+v", got)
	}
}
