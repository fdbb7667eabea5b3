package redact

import (
	"sort"
	"strings"
)

// Key names that make a value worth a closer look, compared with normalised
// names (see KeyRule). Unlike DefaultKeyRules they do not mask the whole
// value: under "phone_verified" a date stays, under "token_type" a word
// stays; only a value of the right shape is masked.
var (
	phoneKeyWords  = []string{"phone", "mobile", "msisdn", "telephone", "fax"}
	phoneKeyNames  = []string{"tel", "cell", "contactnumber"}
	ssnKeyWords    = []string{"socialsecurity", "taxpayerid", "nationalid"}
	ssnKeyNames    = []string{"tin", "itin", "taxid"}
	secretKeyWords = []string{"secret", "token", "passw", "pwd", "credential", "creds", "apikey",
		"accesskey", "privatekey", "signingkey", "encryptionkey", "masterkey", "clientkey",
		"hmac", "auth", "signature", "aws"}
)

func containsWord(k string, words []string) bool {
	for _, w := range words {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

func isName(k string, names []string) bool {
	for _, n := range names {
		if k == n {
			return true
		}
	}
	return false
}

// phoneKey: a key whose value is a phone number ("phone", "mobile_no", "tel").
func phoneKey(k string) bool { return containsWord(k, phoneKeyWords) || isName(k, phoneKeyNames) }

// secretishKey: a key whose name says secret, token, password, credential or
// key material.
func secretishKey(k string) bool { return containsWord(k, secretKeyWords) }

// ssnKey: a key that names an SSN or a tax id, or a secret-ish one, under
// which nine bare digits are an SSN.
func ssnKey(k string) bool {
	return strings.HasSuffix(k, "ssn") || containsWord(k, ssnKeyWords) || isName(k, ssnKeyNames) || secretishKey(k)
}

// awsSecretKey: under an aws or secret key a 40-character AWS secret shape
// needs no key id beside it.
func awsSecretKey(k string) bool { return strings.Contains(k, "aws") || strings.Contains(k, "secret") }

// value redacts a string found under a key (a JSON member, a header, the
// value of key=value text): the rules for any text and those that apply
// under this key. key is normalised; "" is no key.
func (r *Redactor) value(key, s string) (string, int) { return r.text(key, s) }

// mayHideKeyed is the cheap test every keyed shape needs: seven characters
// and a digit (a phone, an SSN, a token).
func mayHideKeyed(s string) bool {
	return len(s) >= minKeyedPhoneDigits && strings.ContainsAny(s, "0123456789")
}

// underAny reports whether a keyed rule applies under the normalised key k.
func (r *Redactor) underAny(k string) bool {
	if r == nil || !r.keyed || k == "" {
		return false
	}
	for i := range r.values {
		if r.values[i].Under != nil && r.values[i].Under(k) {
			return true
		}
	}
	return false
}

// keyedSpan is a secret a keyed rule found in key=value text.
type keyedSpan struct {
	start, end int
	rule       *ValueRule
}

// keyedValues masks, in key=value, key: value and "key": value text, the
// shapes that count only under their key ("phone: 030 1234567"). It reads
// keys as keyValues does, but masks only what the rules find inside a value,
// so pairs nested in that value are still read.
func (r *Redactor) keyedValues(s string) (string, int) {
	if !r.keyed || !mayHideKeyed(s) {
		return s, 0
	}
	var found []keyedSpan
	for pos := 0; pos < len(s); {
		i := strings.IndexAny(s[pos:], ":=")
		if i < 0 {
			break
		}
		sep := pos + i
		pos = sep + 1
		key, quoted := keyBefore(s[:sep])
		if key == "" {
			continue
		}
		k := normalizeKey(key)
		if !r.underAny(k) {
			continue
		}
		start := sep + 1
		for start < len(s) && (s[start] == ' ' || s[start] == '\t') {
			start++
		}
		vStart, vEnd, _ := valueSpan(s, start, s[sep], quoted)
		for j := range r.values {
			v := &r.values[j]
			if v.Under == nil || !v.Under(k) {
				continue
			}
			for _, sp := range v.spans(s[vStart:vEnd]) {
				found = append(found, keyedSpan{vStart + sp[0], vStart + sp[1], v})
			}
		}
	}
	if len(found) == 0 {
		return s, 0
	}
	sort.SliceStable(found, func(a, b int) bool { return found[a].start < found[b].start })
	var b strings.Builder
	n, last := 0, 0
	for _, f := range found {
		if f.start < last {
			continue // inside a secret already masked
		}
		b.WriteString(s[last:f.start])
		b.WriteString(maskValue(f.rule.Kind, s[f.start:f.end], f.rule.Mask))
		last = f.end
		n++
	}
	b.WriteString(s[last:])
	return b.String(), n
}
