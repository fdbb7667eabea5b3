package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// fuzzPlants are secrets of the kinds the personal-data detectors find, with
// the key they need (if any) and the part that must not stay readable.
var fuzzPlants = []struct{ key, planted, hidden, kind string }{
	{"note", "DE89 3704 0044 0532 0130 00", "DE89 3704 0044 0532 0130", "iban"},
	{"note", "GB82WEST12345698765432", "GB82WEST123456987654", "iban"},
	{"note", "123-45-6789", "123-45-6789", "ssn"},
	{"customer_ssn", "078051120", "078051120", "ssn"},
	{"note", "+4915112345678", "4915112345678", "phone"},
	{"note", "(555) 123-4567", "123-4567", "phone"},
	{"note", "555-123-4567", "555-123-4567", "phone"},
	{"note", "+1 555 123 4567", "555 123 4567", "phone"},
	{"note", "+44 20 7946 0958", "20 7946 0958", "phone"},
	{"phone", "030 1234567", "030 1234567", "phone"},
	{"note", "AKIA" + "IOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret"},
	{"aws_creds", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret"},
	{"signing_key_ref", "Zm9vYmFyQmF6MTIzNDU2Nzg5", "Zm9vYmFyQmF6MTIzNDU2Nzg5", "secret"},
	// Loose tokens: no key, no key id, only their look.
	{"data", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "secret"},
	{"x-debug", "q8Zr_T3vLx9-Ka2WmB7nYc4pHd6sJf1uGe5RtX0o", "q8Zr_T3vLx9-Ka2WmB7nYc4pHd6sJf1uGe5RtX0o", "secret"},
}

// Whatever surrounds them: no panic, once a detector finds the planted
// secret it is not readable in what is shown, and redacting what was
// redacted changes nothing.
func FuzzPersonalDataDetectors(f *testing.F) {
	for i := range fuzzPlants {
		f.Add("payment failed", "retrying", uint8(i))
	}
	f.Add("+1", "0", uint8(4))
	f.Add("DE89", "00", uint8(0))
	f.Add("phone:", "\n", uint8(9))
	f.Add("AKIA", "secret", uint8(10))
	f.Add("\x00\xff", `"}`, uint8(12))
	f.Add("x", "y", uint8(13))  // glued to the token: a longer run, which may not look random
	f.Add("/", "==", uint8(14)) // base64 alphabet around it
	r := New()
	f.Fuzz(func(t *testing.T, prefix, suffix string, which uint8) {
		p := fuzzPlants[int(which)%len(fuzzPlants)]
		text := prefix + " " + p.planted + " " + suffix
		hStart := len(prefix) + 1 + strings.Index(p.planted, p.hidden)
		hEnd := hStart + len(p.hidden)
		check := func(where, key, out string) {
			if firedOn(r, p.kind, key, text, hStart, hEnd) && strings.Contains(out, p.hidden) {
				t.Fatalf("%s: the %s detector found %q but it is readable in %q", where, p.kind, p.hidden, out)
			}
		}
		for _, key := range []string{"", normalizeKey(p.key)} {
			out, _ := r.text(key, text)
			check("text under "+key, key, out)
			if again, n := r.text(key, out); again != out || n != 0 {
				t.Fatalf("not idempotent under %q: %q -> %q -> %q (%d)", key, text, out, again, n)
			}
		}
		doc, _ := json.Marshal(map[string]string{p.key: text})
		out, _, _, err := r.JSON(doc, 0)
		if err != nil {
			t.Fatalf("JSON(%s): %v", doc, err)
		}
		key := normalizeKey(p.key)
		check("JSON", key, out)
		h, _ := Headers(headers{p.key: text}, r)
		if s, ok := h[p.key].(string); ok {
			check("header", key, s)
		}
	})
}

// firedOn reports whether a rule of the kind, applicable under key, finds a
// secret in text that covers text[start:end].
func firedOn(r *Redactor, kind, key, text string, start, end int) bool {
	for i := range r.values {
		v := &r.values[i]
		if v.Kind != kind || (v.Under != nil && (key == "" || !v.Under(key))) {
			continue
		}
		for _, sp := range v.spans(text) {
			if sp[0] <= start && sp[1] >= end {
				return true
			}
		}
	}
	return false
}
