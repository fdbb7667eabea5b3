package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/doctor"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// The JSON output is a contract with scripts: these tests pin its exact
// text for the shapes that are easy to break (null lists, missing times,
// escapes, names out of order).

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	if err := writeJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestQueueRowsJSON(t *testing.T) {
	top := triage.Topology{Vhost: "prod\x1b[2J", Queues: []triage.Queue{
		{Name: "orders", Type: "classic", Messages: 3, PublishRate: 1.5},
		{Name: "billing.parking", Type: "quorum", Messages: 7, DepthRate: 0.5}, // dead letters: no publish rate
		{Name: "audit.parking", Type: "classic"},
	}}
	parking := []triage.ParkingQueue{
		{Queue: triage.Queue{Name: "billing.parking"}, DeadLetteredFrom: []string{"billing", "pay\nments"}, Rule: "dead-lettered from billing, pay\nments"},
		{Queue: triage.Queue{Name: "audit.parking"}, ByName: true, Rule: "name parking"}, // found by name: nothing dead-letters into it
	}
	tests := []struct {
		name    string
		top     triage.Topology
		parking []triage.ParkingQueue
		want    string
	}{
		{"no queues is an empty array", triage.Topology{Vhost: "/"}, nil, "[]\n"},
		{"sorted by name, parking marked, names sanitised", top, parking, `[
  {
    "vhost": "prod\\x1b[2J",
    "name": "audit.parking",
    "type": "classic",
    "messages": 0,
    "parking": true,
    "dead_lettered_from": [],
    "rule": "name parking",
    "publish_rate": 0,
    "ingress_rate": 0
  },
  {
    "vhost": "prod\\x1b[2J",
    "name": "billing.parking",
    "type": "quorum",
    "messages": 7,
    "parking": true,
    "dead_lettered_from": [
      "billing",
      "pay\\nments"
    ],
    "rule": "dead-lettered from billing, pay\\nments",
    "publish_rate": 0,
    "ingress_rate": 0.5
  },
  {
    "vhost": "prod\\x1b[2J",
    "name": "orders",
    "type": "classic",
    "messages": 3,
    "parking": false,
    "dead_lettered_from": [],
    "rule": "",
    "publish_rate": 1.5,
    "ingress_rate": 1.5
  }
]
`},
	}
	v4 := triage.Topology{Vhost: "/", Broker: triage.NewBroker("4.0.5", nil), Queues: []triage.Queue{{Name: "q", Type: "quorum"}}}
	tests = append(tests, struct {
		name    string
		top     triage.Topology
		parking []triage.ParkingQueue
		want    string
	}{"each row names the broker version when known", v4, nil, `[
  {
    "vhost": "/",
    "name": "q",
    "type": "quorum",
    "messages": 0,
    "parking": false,
    "dead_lettered_from": [],
    "rule": "",
    "publish_rate": 0,
    "ingress_rate": 0,
    "broker_version": "4.0.5"
  }
]
`})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := jsonOf(t, queueRows(tc.top, tc.parking)); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestGroupRowsJSON(t *testing.T) {
	oldest := time.Date(2026, 11, 30, 9, 0, 0, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		name   string
		groups []triage.Group
		want   string
	}{
		{"no groups is an empty array", nil, "[]\n"},
		{"times in UTC, unknown times null, no event types an empty array, owner by event type", []triage.Group{
			{Reason: triage.ReasonRejected, ReasonCode: "address_invalid", Count: 2, Oldest: oldest, Newest: oldest.Add(time.Hour), EventTypes: []string{"order.created"}},
			{Reason: triage.ReasonPublished, Count: 1},
			{Reason: triage.ReasonRejected, ReasonCode: "JsonParseException @ InventoryService.reserve", Count: 1,
				ExceptionType: "com.fasterxml.jackson.core.JsonParseException", ThrownAt: "com.acme.inventory.InventoryService.reserve:88"},
		}, `[
  {
    "reason": "rejected",
    "reason_code": "address_invalid",
    "exception_type": "",
    "thrown_at": "",
    "count": 2,
    "oldest": "2026-11-30T08:00:00Z",
    "newest": "2026-11-30T09:00:00Z",
    "event_types": [
      "order.created"
    ],
    "owner": "orders"
  },
  {
    "reason": "published",
    "reason_code": "",
    "exception_type": "",
    "thrown_at": "",
    "count": 1,
    "oldest": null,
    "newest": null,
    "event_types": [],
    "owner": ""
  },
  {
    "reason": "rejected",
    "reason_code": "JsonParseException @ InventoryService.reserve",
    "exception_type": "com.fasterxml.jackson.core.JsonParseException",
    "thrown_at": "com.acme.inventory.InventoryService.reserve:88",
    "count": 1,
    "oldest": null,
    "newest": null,
    "event_types": [],
    "owner": ""
  }
]
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := jsonOf(t, groupRows("orders.parking", tc.groups, approval.Owners{{EventType: "order.*", Team: "orders"}}, redact.New())); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestMessageLinesRedactHeadersAndKeepHTMLCharacters(t *testing.T) {
	died := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ms := []triage.Triaged{
		{
			ID: "m-1", Reason: triage.ReasonRejected, ReasonCode: "tax_profile_missing", Attempts: 3,
			Envelope: triage.Envelope{EventType: "customer.updated"},
			Message:  triage.Message{Headers: triage.Headers{"authorization": "Bearer abc.def.ghi", "x-note": "a<b & c>d"}},
			Timeline: []triage.Event{{Time: died, Kind: triage.EventDeath, Queue: "billing", Reason: "rejected", Count: 3}},
			Payload:  `{"note":"<b>"}`, PayloadBytes: 14, Redactions: 1,
		},
		{ID: "m-2", Reason: triage.ReasonPublished, Payload: "plain", PayloadBytes: 5}, // no headers, no timeline
	}
	var b bytes.Buffer
	if err := writeMessageLines(&b, ms, redact.New(), discardMarks{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one line per message, got %d:\n%s", len(lines), b.String())
	}
	want := []string{
		`{"id":"m-1","reason":"rejected","reason_code":"tax_profile_missing","exception_type":"","thrown_at":"","event_type":"customer.updated","attempts":3,` +
			`"timeline":[{"time":"2026-11-30T10:00:00Z","kind":"death","queue":"billing","reason":"rejected","count":3}],` +
			`"headers":{"authorization":"` + maskedHeader(t, "Bearer abc.def.ghi") + `","x-note":"a<b & c>d"},` +
			`"payload":"{\"note\":\"<b>\"}","payload_bytes":14,"redactions":2}`,
		`{"id":"m-2","reason":"published","reason_code":"","exception_type":"","thrown_at":"","event_type":"","attempts":0,"timeline":[],"headers":{},"payload":"plain","payload_bytes":5,"redactions":0}`,
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d\n got %s\nwant %s", i+1, lines[i], want[i])
		}
	}
	if strings.Contains(b.String(), "abc.def.ghi") {
		t.Error("the authorization header reached the output")
	}
}

// maskedHeader is what the default redactor shows for a secret header, so
// the test pins the JSON shape without restating the mask style.
func maskedHeader(t *testing.T, v string) string {
	t.Helper()
	h, n := redact.Headers(triage.Headers{"authorization": v}, redact.New())
	s, ok := h["authorization"].(string)
	if n != 1 || !ok || s == v {
		t.Fatalf("the default redactor left authorization as %v (%d redactions)", h["authorization"], n)
	}
	return s
}

func TestFindingsJSON(t *testing.T) {
	var b bytes.Buffer
	if err := writeFindingsJSON(&b, nil); err != nil {
		t.Fatal(err)
	}
	if b.String() != "[]\n" {
		t.Errorf("no findings = %q, want []", b.String())
	}
	b.Reset()
	fs := []doctor.Finding{{Kind: "maxlen-without-dlx", Severity: doctor.SeverityWarning, Queue: "orders", Detail: "x-max-length 10 & no DLX", Fix: "set a dead-letter exchange"}}
	if err := writeFindingsJSON(&b, fs); err != nil {
		t.Fatal(err)
	}
	want := `[
  {
    "kind": "maxlen-without-dlx",
    "severity": "warning",
    "queue": "orders",
    "exchange": "",
    "detail": "x-max-length 10 & no DLX",
    "fix": "set a dead-letter exchange"
  }
]
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// A message the journal says was discarded carries the entry that says so.
func TestMessageLinesMarkADiscardedMessageThatIsBack(t *testing.T) {
	ms := []triage.Triaged{{ID: "m-1", Reason: triage.ReasonPublished}, {ID: "m-2", Reason: triage.ReasonPublished}}
	var b bytes.Buffer
	ms = append(ms, triage.Triaged{ID: "m-3", Reason: triage.ReasonPublished})
	marks := discardMarks{discarded: map[string]uint64{"m-2": 41}, interrupted: map[string]uint64{"m-3": 44}}
	if err := writeMessageLines(&b, ms, redact.New(), marks); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if strings.Contains(lines[0], "discard") || !strings.Contains(lines[1], `"discarded":{"entry":41,"note":"discarded in journal #41, back in the queue`) {
		t.Errorf("lines:\n%s", b.String())
	}
	if !strings.Contains(lines[2], `"interrupted_discard":{"entry":44,"note":"selected for discard in journal #44, whose outcome was never journaled`) {
		t.Errorf("interrupted: %s", lines[2])
	}
}
