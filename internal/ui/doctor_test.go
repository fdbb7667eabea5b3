package ui

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/doctor"
)

// TestDoctorScreenShowsFindingsWithSeverityWords: D lists the vhost's
// findings most urgent first, each led by its severity as a word, with the
// selected one's detail and fix under the list; enter shows it whole, esc
// goes back to the list and then to the queues.
func TestDoctorScreenShowsFindingsWithSeverityWords(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{Reader: plantedDoctor()}, 80, 24)
	h.mustShow("doctor: 1 error, ", " — D shows them")
	h.press("doctor")
	if h.m.c.focus != screenDoctor {
		t.Fatalf("screen %d, want doctor", h.m.c.focus)
	}
	want := doctor.Diagnose(plantedDoctor().top, nil)
	if len(h.m.doctor.Findings()) == 0 {
		t.Fatal("no findings shown")
	}
	first := h.m.doctor.Findings()[0]
	if first.Kind != doctor.KindMissingExchange || first.Severity != doctor.SeverityError {
		t.Fatalf("first finding %s/%s, want the planted dlx-missing-exchange error (all: %+v)", first.Severity, first.Kind, want)
	}
	h.mustShow("ERROR    dlx-missing-exchange", "billing.work", "WARNING", "ADVISORY", "what: ", "fix:  ")
	h.press("open")
	if !h.m.doctor.Whole() {
		t.Fatal("enter did not open the finding")
	}
	h.mustShow("one finding", "ERROR dlx-missing-exchange", "queue billing.work, exchange billing.dlx")
	h.press("back")
	if h.m.c.focus != screenDoctor || h.m.doctor.Whole() {
		t.Fatal("esc from one finding should show the list")
	}
	h.press("back")
	if h.m.c.focus != screenQueues {
		t.Fatalf("esc from the list left screen %d, want queues", h.m.c.focus)
	}
}

// TestDoctorRerunsAndWorksFromASnapshot: r re-reads the topology; a fixed
// topology shows no finding, and a read that fails says so.
func TestDoctorRerunsOnRefresh(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	r := plantedDoctor()
	h := newHarness(t, Options{Reader: r}, 80, 24)
	h.press("doctor")
	h.mustShow("dlx-missing-exchange")
	r.top.Exchanges = append(r.top.Exchanges, triage.Exchange{Name: "billing.dlx", Type: "fanout"})
	r.top.Bindings = append(r.top.Bindings, triage.Binding{Source: "billing.dlx", Destination: "orders.dlq", DestinationType: "queue"})
	h.press("refresh")
	h.mustNotShow("dlx-missing-exchange")
	for _, f := range h.m.doctor.Findings() {
		if f.Severity == doctor.SeverityError {
			t.Fatalf("after the fix an error remains: %+v", f)
		}
	}
	r.failTopology = errTopology
	h.press("refresh")
	h.mustShow("could not read the topology", "doctor: reading the topology")
}

var errTopology = &topologyError{}

type topologyError struct{}

func (*topologyError) Error() string { return "broker went away" }

// TestDoctorFindingTextIsSanitised: a queue name with an escape reaches the
// doctor screen escaped.
func TestDoctorFindingTextIsSanitised(t *testing.T) {
	r := scenario()
	r.top.Queues = append(r.top.Queues, triage.Queue{Name: "bad\x1b[2J.work", Type: triage.QueueClassic,
		DeadLetterExchange: "nowhere", HasDeadLetterExchange: true})
	h := newHarness(t, Options{Reader: r}, 120, 40)
	h.press("doctor")
	if strings.Contains(h.m.Screen(), "\x1b[2J") {
		t.Fatal("an escape from a queue name reached the doctor screen")
	}
	h.mustShow(`bad\x1b[2J.work`)
}

// TestDoctorFilterThatMatchesNothing: a kept filter that matches no finding
// shows no empty finding ("what:" and "fix:" with nothing after them) under
// the list, nor does the folded advisories' row; esc clears the filter, then
// leaves.
func TestDoctorFilterThatMatchesNothing(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{Reader: plantedDoctor()}, 80, 24)
	h.press("doctor")
	h.press("filter")
	h.typeText("zzz")
	h.send(keyPress("enter"))
	h.mustShow("(0 of ")
	h.mustNotShow("what:", "fix:")
	h.press("back")
	h.mustNotShow("zzz")
	h.mustShow("what: ", "fix:  ")
	h.press("bottom")
	h.mustShow("advisories,")
	h.mustNotShow("what:", "fix:")
	h.press("back")
	if h.m.c.focus != screenQueues {
		t.Fatalf("esc from the list left screen %d, want queues", h.m.c.focus)
	}
}
