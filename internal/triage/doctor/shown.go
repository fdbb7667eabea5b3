package doctor

import (
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// Shown is fs as a screen or JSON may show them: every string redacted and
// sanitised (triage.ShownLine), as a finding quotes the broker's names and
// arguments, which anyone who can declare a queue chose. Matching a finding
// to its queue uses Diagnose's findings as they are.
func Shown(fs []Finding, red *redact.Redactor) []Finding {
	out := make([]Finding, len(fs))
	for i, f := range fs {
		out[i] = Finding{Kind: f.Kind, Severity: f.Severity,
			Queue: shown(red, f.Queue), Exchange: shown(red, f.Exchange), Detail: shown(red, f.Detail), Fix: shown(red, f.Fix)}
	}
	return out
}

func shown(red *redact.Redactor, s string) string {
	text, _ := triage.ShownLine(red, s)
	return text
}
