// Package redact finds secrets in broker text (by key, by shape, by JSON
// path) and masks them before anything is shown, printed or searched. It is
// a leaf under triage: core triage renders payloads with a *Redactor.
package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// Mask is how a secret is replaced once found.
type Mask int

const (
	// MaskFull hides the whole secret: [REDACTED] or [REDACTED:jwt].
	MaskFull Mask = iota
	// MaskPartial keeps a hint a responder can match against a ticket: the
	// last 4 characters ([REDACTED:card ...1111]), or for an e-mail address
	// its first character and domain (j***@example.com).
	MaskPartial
	// MaskHash shows a short SHA-256 fingerprint so equal secrets can be told
	// apart without being seen. Unsalted: not for low-entropy secrets.
	MaskHash
)

// KeyMatch is how a KeyRule's name is compared with a normalised key.
type KeyMatch int

const (
	MatchExact    KeyMatch = iota // the whole key: "pan" but not "japan"
	MatchSuffix                   // the key ends with it: "db_password", "github_token"
	MatchContains                 // anywhere in the key: "password_reset"
)

// KeyRule masks the whole value (a scalar or a subtree) of a key whose name
// matches. Names are compared normalised: lower case, without - _ . or
// spaces, so "X-Api-Key", "api_key" and "apiKey" are one name.
type KeyRule struct {
	Name  string
	Match KeyMatch
	Mask  Mask
}

// ValueRule masks a secret recognised by its shape, wherever it appears.
type ValueRule struct {
	Kind    string         // names the secret in the mask: [REDACTED:jwt]
	Pattern *regexp.Regexp // finds candidates
	Group   int            // the submatch to mask; 0 is the whole match
	// Find, when set, is used instead of Pattern for shapes a regular
	// expression cannot pick out alone (a card number inside a longer run
	// of digit groups). It returns the [start, end) spans of candidates.
	Find func(text string) [][2]int
	// Anchors, when set, are literals of which a match contains at least one:
	// text without any of them skips the pattern, which keeps clean text cheap.
	Anchors []string
	// Prefilter, when set, is a cheap test of the whole text: false skips
	// the pattern (a card needs a run of 13 digits somewhere).
	Prefilter func(text string) bool
	Valid     func(secret string) bool // optional check, e.g. Luhn for cards
	Mask      Mask
	// Under, when set, limits the rule to values under a key it accepts (a
	// JSON member, a header, key=value text); it is given the normalised
	// key name. A shape too common to mask everywhere, such as a national
	// phone number, is a secret only under a "phone" key.
	Under func(key string) bool
}

// Redactor masks secrets in payloads and header values. It is immutable and
// safe for concurrent use; a nil *Redactor redacts nothing.
type Redactor struct {
	keys   []KeyRule
	values []ValueRule
	paths  []PathRule // JSON payloads only
	keyed  bool       // some value rule has Under
}

// New returns the default redactor: the rules of DefaultKeyRules and
// DefaultValueRules.
func New() *Redactor {
	return (&Redactor{}).With(DefaultKeyRules(), DefaultValueRules())
}

// With returns a redactor with r's rules plus the given ones (a configured
// rule set extends the defaults without changing r).
func (r *Redactor) With(keys []KeyRule, values []ValueRule) *Redactor {
	out := &Redactor{}
	if r != nil {
		out.keys = append(out.keys, r.keys...)
		out.values = append(out.values, r.values...)
		out.paths = append(out.paths, r.paths...)
		out.keyed = r.keyed
	}
	for _, k := range keys {
		k.Name = normalizeKey(k.Name)
		if k.Name != "" {
			out.keys = append(out.keys, k)
		}
	}
	for _, v := range values {
		if v.Pattern != nil || v.Find != nil {
			out.values = append(out.values, v)
			out.keyed = out.keyed || v.Under != nil
		}
	}
	return out
}

// SecretKey reports whether a value under this key (a JSON key, a header
// name, the key of key=value text) is a secret as a whole.
func (r *Redactor) SecretKey(key string) bool {
	_, ok := r.keyRule(key)
	return ok
}

func (r *Redactor) keyRule(key string) (KeyRule, bool) {
	if r == nil || len(r.keys) == 0 {
		return KeyRule{}, false
	}
	return r.normalKeyRule(normalizeKey(key))
}

// normalKeyRule is keyRule for a key already normalised.
func (r *Redactor) normalKeyRule(k string) (KeyRule, bool) {
	if r == nil || k == "" {
		return KeyRule{}, false
	}
	for _, rule := range r.keys {
		switch rule.Match {
		case MatchExact:
			if k == rule.Name {
				return rule, true
			}
		case MatchSuffix:
			if strings.HasSuffix(k, rule.Name) {
				return rule, true
			}
		case MatchContains:
			if strings.Contains(k, rule.Name) {
				return rule, true
			}
		}
	}
	return KeyRule{}, false
}

// normalizeKey lower-cases a key and drops the separators people put in key
// names, so naming style does not decide whether a secret is found.
func normalizeKey(k string) string {
	clean := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '-' || c == '_' || c == '.' || c == ' ' || (c >= 'A' && c <= 'Z') {
			clean = false
			break
		}
	}
	if clean {
		return k
	}
	var b strings.Builder
	b.Grow(len(k))
	for _, c := range k {
		switch {
		case c == '-' || c == '_' || c == '.' || c == ' ':
		case c >= 'A' && c <= 'Z':
			b.WriteRune(c + ('a' - 'A'))
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// Text redacts free text: secrets by shape, then the values of secret keys
// written as key=value, key: value or "key": "value". It returns the text
// and how many secrets it masked.
func (r *Redactor) Text(s string) (string, int) { return r.text("", s) }

// text is Text for a value under the normalised key ("" for none): a rule
// with Under applies when it accepts the key, in its place in the rule
// order, so a phone number under "phone" is not taken for a card.
func (r *Redactor) text(key string, s string) (string, int) {
	if r == nil || s == "" {
		return s, 0
	}
	keyed := key != "" && r.keyed && mayHideKeyed(s)
	n := 0
	for i := range r.values {
		if u := r.values[i].Under; u != nil && (!keyed || !u(key)) {
			continue
		}
		var c int
		s, c = r.values[i].apply(s)
		n += c
	}
	s, c := r.keyValues(s)
	s, k := r.keyedValues(s)
	return s, n + c + k
}

func (v *ValueRule) apply(s string) (string, int) {
	spans := v.spans(s)
	if len(spans) == 0 {
		return s, 0
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp[0]])
		b.WriteString(maskValue(v.Kind, s[sp[0]:sp[1]], v.Mask))
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String(), len(spans)
}

// spans returns the secrets the rule finds in s, in order, not overlapping.
func (v *ValueRule) spans(s string) [][2]int {
	if !v.mayMatch(s) {
		return nil
	}
	var found [][2]int
	if v.Find != nil {
		found = v.Find(s)
	} else {
		for _, loc := range v.Pattern.FindAllStringSubmatchIndex(s, -1) {
			if 2*v.Group+1 < len(loc) {
				found = append(found, [2]int{loc[2*v.Group], loc[2*v.Group+1]})
			}
		}
	}
	out := found[:0]
	last := 0
	for _, sp := range found {
		if sp[0] < last || sp[0] >= sp[1] || sp[1] > len(s) {
			continue
		}
		if v.Valid != nil && !v.Valid(s[sp[0]:sp[1]]) {
			continue
		}
		out = append(out, sp)
		last = sp[1]
	}
	return out
}

func (v *ValueRule) mayMatch(s string) bool {
	if len(v.Anchors) > 0 && !containsAny(s, v.Anchors) {
		return false
	}
	return v.Prefilter == nil || v.Prefilter(s)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// redactedPrefix starts every mask except the partial e-mail one; a value that
// already starts with it is not masked twice.
const redactedPrefix = "[REDACTED"

// maskValue renders the mask of a secret found by shape.
func maskValue(kind, secret string, m Mask) string {
	switch m {
	case MaskPartial:
		if kind == "email" {
			return maskEmail(secret)
		}
		if hint := partialHint(secret); hint != "" {
			return redactedPrefix + ":" + kind + " ..." + hint + "]"
		}
	case MaskHash:
		return redactedPrefix + ":" + kind + " " + fingerprint(secret) + "]"
	}
	return redactedPrefix + ":" + kind + "]"
}

// maskKeyed renders the mask of a value found by its key.
func maskKeyed(secret string, m Mask) string {
	switch m {
	case MaskPartial:
		if hint := partialHint(secret); hint != "" {
			return redactedPrefix + " ..." + hint + "]"
		}
	case MaskHash:
		return redactedPrefix + " " + fingerprint(secret) + "]"
	}
	return redactedPrefix + "]"
}

// partialHint is the last 4 letters or digits a partial mask shows, or ""
// when the secret has fewer than 8 of them: the last 4 of a PIN or a short
// code would be most or all of it.
func partialHint(secret string) string {
	if len(lastN(secret, 8)) < 8 {
		return ""
	}
	return lastN(secret, 4)
}

func fingerprint(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "sha256:" + hex.EncodeToString(sum[:4])
}

// lastN returns the last n letters or digits of s, skipping separators, so a
// card "4111 1111 1111 1111" keeps "1111".
func lastN(s string, n int) string {
	out := make([]byte, 0, n)
	for i := len(s) - 1; i >= 0 && len(out) < n; i-- {
		c := s[i]
		if (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			out = append(out, c)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// maskEmail keeps the first character of the local part and the domain:
// enough to tell customers apart in an incident, not enough to contact them.
func maskEmail(addr string) string {
	at := strings.LastIndexByte(addr, '@')
	if at <= 0 {
		return redactedPrefix + ":email]"
	}
	return addr[:1] + "***" + addr[at:]
}
