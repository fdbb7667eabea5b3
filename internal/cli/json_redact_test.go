package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/redact/redacttest"
	"github.com/dlqt/dlqt/internal/triage/triagetest"
)

// A message row carries what a viewer may see: the timeline built from
// retry and fault headers, the reason code and the event type pass the
// same redactor as the headers beside them, and redactions counts them all.
func TestMessageLinesRedactTimelineAndFields(t *testing.T) {
	red := redact.New()
	tr, secrets := triagetest.LeakyFailure(red)
	var b bytes.Buffer
	if err := writeMessageLines(&b, []triage.Triaged{tr}, red, discardMarks{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("%q reached the JSON:\n%s", s, out)
		}
	}
	var row MessageRow
	if err := json.Unmarshal(b.Bytes(), &row); err != nil {
		t.Fatal(err)
	}
	// password, bearer, card in the timeline (the header values are masked
	// as well: password, bearer and card again); the reason code's card
	// twice (the field and the failure event), the event type's token.
	if row.Redactions < 8 {
		t.Errorf("%d redactions counted, want at least 8:\n%s", row.Redactions, out)
	}
}

// A group's reason, reason code and event types are the senders' text (a
// client may write x-death itself): the groups output (JSON and table)
// shows them redacted, while the owner is still found from them as they are.
func TestGroupRowsRedactReasonCodeAndEventTypes(t *testing.T) {
	gs := []triage.Group{{Reason: "rejected password=Hunter2-reason", ReasonCode: "DECLINED:" + redacttest.VisaRaw, Count: 2,
		EventTypes: []string{"order.paid token=" + redacttest.Opaque}}}
	rows := groupRows("orders.parking", gs, approval.Owners{{EventType: "order.*", Team: "orders"}}, redact.New())
	var b bytes.Buffer
	if err := printGroups(&b, triage.Batch{Queue: "orders.parking"}, 2, filter.Filter{}, rows, true); err != nil {
		t.Fatal(err)
	}
	out := jsonOf(t, rows) + b.String()
	for _, s := range []string{redacttest.VisaRaw, redacttest.Opaque, "Hunter2-reason"} {
		if strings.Contains(out, s) {
			t.Errorf("%q is in the groups output:\n%s", s, out)
		}
	}
	if rows[0].Owner != "orders" || !strings.HasPrefix(rows[0].ReasonCode, "DECLINED:[REDACTED:card") {
		t.Errorf("row %+v", rows[0])
	}
}
