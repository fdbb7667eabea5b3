package approval

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Describe is the proposal in lines a person reads before approving or
// running it, the same in `dlqt proposals ID` and on the TUI's proposal
// screen: what, where, who asked and until when, who decided (or, while
// nobody has, approvers: who may), its hash, then the plan and the exact
// message ids with the SHA-256 of each body. Every text from the journal is sanitized.
func (s State) Describe(now time.Time, approvers []string) []string {
	p := s.Proposal
	lines := []string{
		fmt.Sprintf("proposal %s: %s %d message(s) of %s (vhost %s), %s", p.ID, p.Action, len(p.MessageIDs),
			sanitize.Line(p.Queue), sanitize.Line(p.Vhost), s.Status(now)),
		fmt.Sprintf("  proposed by %s at %s, expires %s", sanitize.Line(p.Proposer), p.ProposedAt.Format(time.RFC3339), p.ExpiresAt.Format(time.RFC3339)),
		fmt.Sprintf("  owners: %s; %s", dash(strings.Join(sanitize.Lines(p.Teams), ", ")), s.decided(approvers)),
	}
	if s.RunBy != "" {
		run := fmt.Sprintf("  run by %s at %s", sanitize.Line(s.RunBy), s.RunAt.Format(time.RFC3339))
		if s.Result != "" {
			run += ": " + sanitize.Line(s.Result)
		}
		lines = append(lines, run)
	}
	lines = append(lines, "  hash "+p.Hash())
	if p.Plan.Reason != "" {
		lines = append(lines, "  reason: "+sanitize.Line(p.Plan.Reason))
	}
	lines = append(lines, p.Plan.lines()...)
	bodies := p.Bodies()
	for _, id := range p.MessageIDs {
		line := "  " + sanitize.Line(id)
		if sum := bodies[id]; sum != "" {
			line += "  body sha256 " + sanitize.Line(sum)
		}
		lines = append(lines, line)
	}
	return lines
}

// decided says who approved or rejected the proposal, and when; while
// nobody has, who may approve it.
func (s State) decided(approvers []string) string {
	if len(s.Decisions) == 0 {
		return "may approve: " + dash(strings.Join(sanitize.Lines(approvers), ", "))
	}
	said := make([]string, len(s.Decisions))
	for i, d := range s.Decisions {
		verb := "approved"
		if !d.Approve {
			verb = "rejected"
		}
		said[i] = fmt.Sprintf("%s by %s at %s", verb, sanitize.Line(d.By), d.At.Format(time.RFC3339))
		if d.Reason != "" {
			said[i] += " (" + sanitize.Line(d.Reason) + ")"
		}
	}
	return strings.Join(said, "; ")
}

// lines are the plan's settings, one "plan NAME: VALUE" each, by name,
// as the proposal's JSON names them (the reason has a line of its own).
func (p Plan) lines() []string {
	raw, _ := json.Marshal(p)
	var fields map[string]any
	_ = json.Unmarshal(raw, &fields)
	delete(fields, "reason")
	var out []string
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		out = append(out, fmt.Sprintf("  plan %s: %s", k, sanitize.Line(fmt.Sprint(fields[k]))))
	}
	return out
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
