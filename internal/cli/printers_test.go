package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/doctor"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// The plain-text plan and result are read by a person before and after a
// replay: these pin the lines that say what goes where and what happened.

func TestPrintPlan(t *testing.T) {
	k := triage.GroupKey{Reason: triage.ReasonRejected, Code: "address_invalid"}
	p := replay.Plan{
		ID: "r-1", Vhost: "prod", Queue: "billing.parking", Selection: triage.Selection{Group: &k},
		Items: replay.ItemsOf(make([]replay.Item, 3)...),
		Destinations: []replay.Destination{
			{Route: triage.Route{Exchange: "billing", RoutingKey: "invoice"}, Count: 2, Original: true, Allowed: true, Queues: []string{"billing"}},
			{Route: triage.Route{RoutingKey: "side\x1b[2J"}, Count: 1},
		},
		Missing:  []string{"m-9"},
		Sample:   []triage.Triaged{{ID: "m-1", Reason: triage.ReasonRejected, Payload: "{\n  \"a\": 1\n}"}},
		Problems: []string{"destination :side is not in replay.allow"},
		Options:  replay.Options{Canary: 5, CanaryRate: 1, Observe: 30 * time.Second, Rate: 50},
	}
	in := triage.Inspection{Batch: triage.Batch{Depth: 900, Messages: make([]triage.Message, 500)}}
	var b bytes.Buffer
	printPlan(&b, p, in, redact.New())
	want := `replay r-1: 3 message(s) of billing.parking (group rejected/address_invalid), vhost prod
  only the first 500 of 900 messages were read (--limit): a group covers those
  -> billing:invoice  2 message(s), original route, reaches billing
  -> :side\x1b[2J  1 message(s), not allowed, reaches no queue
  not found in the queue: m-9
  sample m-1  rejected/-  { "a": 1 }
  allowed: no
  problem: destination :side is not in replay.allow
  canary 5 at 1.0 msg/s, observe 30s, then up to 50.0 msg/s; at-least-once: a duplicate is possible after a crash
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestPlanSampleIsClippedToTerminalCells(t *testing.T) {
	p := replay.Plan{ID: "r-1", Sample: []triage.Triaged{{ID: "m-1", Reason: triage.ReasonRejected, Payload: strings.Repeat("注", 80)}}}
	var b bytes.Buffer
	printPlan(&b, p, triage.Inspection{}, redact.New())
	want := "  sample m-1  rejected/-  " + strings.Repeat("注", 49) + "…\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("want the sample clipped to 100 cells:\n%s", b.String())
	}
}

func TestPrintResult(t *testing.T) {
	var b bytes.Buffer
	printResult(&b, replay.Result{ID: "r-1", Resolved: 5, FailedAgain: 1, Untouched: 94, Published: 6})
	if want := "replay r-1: resolved 5, failed again 1, returned 0, untouched 94 (published 6)\n"; b.String() != want {
		t.Errorf("stopped early: got %q, want %q", b.String(), want)
	}
	b.Reset()
	printResult(&b, replay.Result{ID: "r-2", Resolved: 100, Published: 100, PacedPublished: 95, PacedElapsed: 1900 * time.Millisecond,
		StoppedBecause: "destination backlog\ngrew"})
	want := "replay r-2: resolved 100, failed again 0, returned 0, untouched 0 (published 100)\n" +
		"paced: 95 published in 1.9s, 50.0 msg/s\n" +
		"stopped: destination backlog\\ngrew\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
}

// TestPrintResultOfOnePacedPublish: one publish after the canary has no
// interval to measure, so no rate: "1 published in 0s, 0.0 msg/s" read as if
// the replay had stalled (seen replaying 2 messages with --canary 1).
func TestPrintResultOfOnePacedPublish(t *testing.T) {
	var b bytes.Buffer
	printResult(&b, replay.Result{ID: "r-3", Resolved: 2, Published: 2, PacedPublished: 1})
	want := "replay r-3: resolved 2, failed again 0, returned 0, untouched 0 (published 2)\n" +
		"paced: 1 published after the canary (one publish has no rate)\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
}

func TestPrintFindings(t *testing.T) {
	var b bytes.Buffer
	if err := printFindings(&b, "prod", nil); err != nil || !strings.HasPrefix(b.String(), "vhost prod: no findings.") {
		t.Errorf("no findings: %q, %v", b.String(), err)
	}
	b.Reset()
	fs := []doctor.Finding{
		{Kind: "dlx-missing-exchange", Severity: doctor.SeverityError, Queue: "orders", Exchange: "gone",
			Detail: "dead letters of orders go to exchange gone, which does not exist, so the broker drops them",
			Fix:    "declare exchange gone"},
		{Kind: "maxlen-without-dlx", Severity: doctor.SeverityWarning, Queue: "q", Detail: "drops the oldest", Fix: "add a DLX"},
	}
	if err := printFindings(&b, "prod", fs); err != nil {
		t.Fatal(err)
	}
	want := `vhost prod: 2 finding(s): 1 error, 1 warning, 0 advisory

ERROR  dlx-missing-exchange  queue orders  exchange gone
  dead letters of orders go to exchange gone, which does not exist, so the
  broker drops them
  Fix: declare exchange gone

WARNING  maxlen-without-dlx  queue q
  drops the oldest
  Fix: add a DLX
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestPrintFindingsKeepsACommandWhole: the fix's rabbitmqctl command is on a
// line of its own, unwrapped, so it pastes into a shell; wrapped inside the
// prose, a paste ran a bare "rabbitmqctl" and then half a policy.
func TestPrintFindingsKeepsACommandWhole(t *testing.T) {
	var b bytes.Buffer
	cmd := `rabbitmqctl set_policy -p dlqt-userwalk-1 NAME '^orders\.work$' '{"dead-letter-exchange":""}' --apply-to queues`
	f := doctor.Finding{Kind: "dlx-by-argument", Severity: doctor.SeverityAdvisory, Queue: "orders.work",
		Detail: "Queue orders.work sets its dead-letter exchange by queue argument.",
		Fix:    "Next time orders.work is declared, leave out x-dead-letter-exchange and set them by policy, e.g. " + cmd + "."}
	if err := printFindings(&b, "dlqt-userwalk-1", []doctor.Finding{f}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\n    $ "+cmd+"\n") {
		t.Errorf("the command is not whole on a line of its own:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "(the command below)") {
		t.Errorf("the prose does not point at the command:\n%s", b.String())
	}
}

// `dlqt proposals ID` of an approved proposal said "may approve: -": it
// names who approved or rejected it, and when; a pending one still names
// who may approve.
func TestPrintProposalNamesItsDecision(t *testing.T) {
	at := time.Date(2026, 12, 1, 23, 40, 0, 0, time.UTC)
	p := approval.Proposal{ID: "p-1", Action: "discard", Vhost: "shop", Queue: "q", Proposer: "alice",
		ProposedAt: at.Add(-time.Hour), ExpiresAt: at.Add(time.Hour), MessageIDs: []string{"m-1"}}
	tests := []struct {
		name      string
		decisions []approval.Decision
		want      string
	}{
		{"pending", nil, "may approve: carol"},
		{"approved", []approval.Decision{{Approve: true, By: "carol", At: at}}, "approved by carol at 2026-12-01T23:40:00Z"},
		{"rejected", []approval.Decision{{By: "carol", At: at, Reason: "wrong queue"}}, "rejected by carol at 2026-12-01T23:40:00Z (wrong queue)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			printProposal(&out, approval.State{Proposal: p, Decisions: tc.decisions}, at, []string{"carol"})
			if !strings.Contains(out.String(), "owners: -; "+tc.want+"\n") {
				t.Errorf("got\n%s\nwant %q", out.String(), tc.want)
			}
			if tc.decisions != nil && strings.Contains(out.String(), "may approve") {
				t.Errorf("a decided proposal still says who may approve:\n%s", out.String())
			}
		})
	}
}

// TestGroupsAndMessagesHeadNameTheQueueAsOne: NServiceBus parks in a queue
// called error; "error: all 26 messages" read as a failure of dlqt.
func TestGroupsAndMessagesHeadNameTheQueueAsOne(t *testing.T) {
	msgs := make([]triage.Message, 26)
	b := triage.Batch{Queue: "error", Depth: 26, Limit: 100, Messages: msgs}
	var g, m bytes.Buffer
	if err := printGroups(&g, b, 26, filter.Filter{}, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := printMessageLines(&m, b, filter.Filter{}, nil); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{g.String(), m.String()} {
		if first, _, _ := strings.Cut(out, "\n"); first != "queue error: all 26 messages" {
			t.Errorf("first line %q, want %q", first, "queue error: all 26 messages")
		}
	}
}

// TestPlanAndResultEscapeWhatTheJournalOrTheBrokerWrote: a plan approved
// from a proposal, or resumed, carries a replay id and revision ids read
// back from a journal or the team's trail, and a sample's message id is the
// publisher's: none of them may drive the terminal that prints them.
func TestPlanAndResultEscapeWhatTheJournalOrTheBrokerWrote(t *testing.T) {
	const evil = "\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J"
	p := replay.Plan{
		ID: "rp-1" + evil, Queue: "q", Items: replay.ItemsOf(replay.Item{ID: "m-1", Revision: &replay.Revision{ID: "rev" + evil, OriginalSHA256: "ab" + evil}}),
		Sample: []triage.Triaged{{ID: "m-1" + evil, Reason: triage.ReasonRejected}},
	}
	var b bytes.Buffer
	printPlan(&b, p, triage.Inspection{}, redact.New())
	printResult(&b, replay.Result{ID: "rp-1" + evil, Resolved: 1, Published: 1, Resumable: true})
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Fatalf("a control character reached the output: %q", out)
	}
	for _, want := range []string{`replay rp-1\x1b]52;c;`, `publishes revision rev\x1b]52`, `sample m-1\x1b]52`} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q shown escaped in:\n%s", want, out)
		}
	}
}
