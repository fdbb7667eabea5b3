package redact

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Names of masks and key matches as a config file writes them.

// ParseMask reads full, partial or hash; "" is full.
func ParseMask(s string) (Mask, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "full":
		return MaskFull, nil
	case "partial":
		return MaskPartial, nil
	case "hash":
		return MaskHash, nil
	}
	return MaskFull, fmt.Errorf("mask %q: want full, partial or hash", s)
}

func (m Mask) String() string {
	switch m {
	case MaskPartial:
		return "partial"
	case MaskHash:
		return "hash"
	}
	return "full"
}

// ParseKeyMatch reads exact, suffix or contains; "" is exact, the least
// surprising for a name someone wrote down.
func ParseKeyMatch(s string) (KeyMatch, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "exact":
		return MatchExact, nil
	case "suffix":
		return MatchSuffix, nil
	case "contains":
		return MatchContains, nil
	}
	return MatchExact, fmt.Errorf("match %q: want exact, suffix or contains", s)
}

// PatternRule builds a value rule from a configured regular expression. name
// labels the mask ([REDACTED:name]). A pattern that matches the empty string
// would mask nothing useful and everything else: it is refused.
func PatternRule(name, expr string, m Mask) (ValueRule, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return ValueRule{}, fmt.Errorf("pattern %q has no name (it labels the mask, [REDACTED:name])", expr)
	}
	if expr == "" {
		return ValueRule{}, fmt.Errorf("pattern %q has no regex", name)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return ValueRule{}, fmt.Errorf("pattern %q: regex %q: %v", name, expr, err)
	}
	if re.MatchString("") {
		return ValueRule{}, fmt.Errorf("pattern %q: regex %q matches the empty string", name, expr)
	}
	return ValueRule{Kind: sanitize.Line(name), Pattern: re, Mask: m}, nil
}
