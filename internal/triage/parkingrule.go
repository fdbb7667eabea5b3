package triage

import (
	"path"
	"strings"
)

// DefaultParkingPatterns name parking queues by the habits of the frameworks
// dlqt decodes first (NServiceBus's `error`, MassTransit's `<queue>_error`
// and `_skipped`, Spring's and ActiveMQ's DLQs), then by the words such
// queues are usually named with. Matched case-insensitively; see
// parkingPatternMatches for the syntax. The first that matches is the rule
// a queue was found by.
var DefaultParkingPatterns = []string{
	"=error", "*.error", "*_error", "*_skipped", "*.dlq", "DLQ.*",
	"dlq", "dead", "parking", "_error", ".error", "failed",
}

// parkingHabits says whose habit a default pattern is, for the rule shown.
var parkingHabits = map[string]string{
	"=error": "NServiceBus", "*.error": "NServiceBus",
	"*_error": "MassTransit", "*_skipped": "MassTransit",
	"*.dlq": "Spring AMQP", "DLQ.*": "ActiveMQ",
}

// parkingPatternMatches reports whether a parking pattern matches a queue
// name, case-insensitively: "=NAME" is that exact name; a pattern with `*`
// or `?` is a glob over the whole name; any other word is a substring (the
// config's patterns were only substrings before globs, and still mean that).
func parkingPatternMatches(pattern, name string) bool {
	p, n := strings.ToLower(pattern), strings.ToLower(name)
	switch {
	case p == "" || p == "=":
		return false
	case strings.HasPrefix(p, "="):
		return n == p[1:]
	case strings.ContainsAny(p, "*?"):
		ok, err := path.Match(p, strings.ReplaceAll(n, "/", "\x00")) // a queue name is no path: "/" is a plain character
		return err == nil && ok
	}
	return strings.Contains(n, p)
}

// parkingRuleByName is the rule a pattern found name by ("name *_error
// (MassTransit)"), or "" when none matches.
func parkingRuleByName(name string, patterns []string) string {
	for _, p := range patterns {
		if parkingPatternMatches(p, name) {
			if habit, ok := parkingHabits[p]; ok {
				return "name " + p + " (" + habit + ")"
			}
			return "name " + p
		}
	}
	return ""
}
