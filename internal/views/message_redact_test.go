package views

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/redact/redacttest"
	"github.com/dlqt/dlqt/internal/triage/triagetest"
)

// The message screen is read by viewers: the timeline, the failure block
// and the identity fields pass the redactor as the headers and payload do,
// and each section says how many values it masked.
func TestMessageScreenRedactsEveryField(t *testing.T) {
	red := redact.New()
	tr, secrets := triagetest.LeakyFailure(red)
	v := NewMessage(testContext())
	v.SetSize(200, 200)
	v.SetMessage(tr, triage.DeliveryCost{}, red, nil)
	screen := ansi.Strip(v.View())
	for _, s := range secrets {
		if strings.Contains(screen, s) {
			t.Errorf("%q is on the screen:\n%s", s, screen)
		}
	}
	for _, want := range []string{"identity (2 values redacted)", "failure (2 values redacted)", "attempt timeline (4 events, 5 values redacted)", "db login failed"} {
		if !strings.Contains(screen, want) {
			t.Errorf("no %q on the screen:\n%s", want, screen)
		}
	}
}

// The groups and messages lists show a reason code and an event type as
// the message screen does: redacted with the context's redactor.
func TestListsRedactReasonCodesAndEventTypes(t *testing.T) {
	ctx := testContext()
	ctx.Redactor = redact.New()
	code, event := "DECLINED:"+redacttest.VisaRaw, "order.paid token="+redacttest.Opaque
	g := NewGroups(ctx)
	g.SetSize(160, 10)
	g.Open("orders.parking")
	insp := &triage.Inspection{
		Batch:    triage.Batch{Queue: "orders.parking"},
		Messages: []triage.Triaged{{ID: "m-1", Reason: "rejected password=Hunter2-reason", ReasonCode: code, Envelope: triage.Envelope{EventType: event}}},
		Groups:   []triage.Group{{Reason: "rejected password=Hunter2-reason", ReasonCode: code, Count: 1, EventTypes: []string{event}, Members: []int{0}}},
	}
	g.SetInspection(insp)
	ms := NewMessages(ctx)
	ms.SetSize(160, 10)
	ms.SetGroup(insp, insp.Groups[0], nil)
	for name, view := range map[string]string{"groups": g.View(), "messages": ms.View()} {
		screen := ansi.Strip(view)
		for _, s := range []string{redacttest.VisaRaw, redacttest.Opaque, "Hunter2-reason"} {
			if strings.Contains(screen, s) {
				t.Errorf("%s: %q is on the screen:\n%s", name, s, screen)
			}
		}
		if !strings.Contains(screen, "DECLINED:[REDACTED:card") {
			t.Errorf("%s: no masked reason code:\n%s", name, screen)
		}
	}
}
