package redact

import (
	"encoding/base64"
	"regexp"
	"strings"
)

// DefaultKeyRules are the key names whose values are secrets. Matching is on
// normalised names (see KeyRule). Broad words use MatchContains or
// MatchSuffix; short or ambiguous ones are exact, so "author", "discard",
// "cardinality", "japan", "tokenizer_version" or "token_type" stay visible.
func DefaultKeyRules() []KeyRule {
	var rules []KeyRule
	add := func(m KeyMatch, names ...string) {
		for _, n := range names {
			rules = append(rules, KeyRule{Name: n, Match: m, Mask: MaskFull})
		}
	}
	add(MatchContains, "password", "passwd", "passphrase", "privatekey", "secretkey",
		"accesskey", "apikey", "cardnumber", "creditcard")
	add(MatchSuffix, "secret", "token", "pwd", "authorization", "cookie", "cookies",
		"sessionid", "credential", "credentials", "cvv", "cvc", "cvv2", "cvc2", "iban")
	add(MatchExact, "auth", "session", "card", "cardno", "ccnumber", "pan", "pin",
		"jwt", "bearer", "ssn", "socialsecuritynumber")
	return rules
}

// DefaultValueRules are the secret shapes found anywhere in text, then those
// found only under a key that names them. Order matters: a private key
// block goes before anything that could match inside it, a JWT before
// "Bearer <token>" so it is named as a JWT, and IBANs and phone numbers
// before cards, whose digit groups they could hold.
func DefaultValueRules() []ValueRule {
	return []ValueRule{
		{
			Kind: "private-key", Anchors: []string{"PRIVATE KEY"},
			// An unterminated block (a truncated body) is masked to the end.
			Pattern: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)`),
		},
		{
			Kind: "jwt", Anchors: []string{"eyJ"},
			// No \b before it: "jwt_eyJ..." must not hide a token behind an underscore.
			Pattern: regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`),
		},
		{
			Kind: "bearer", Group: 1, Anchors: []string{"earer", "EARER"},
			// 16+ characters: "bearer of bad news" is prose, not a token.
			Pattern: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)`),
		},
		{
			Kind: "basic", Group: 1, Anchors: []string{"asic", "ASIC"},
			Pattern: regexp.MustCompile(`(?i)\bbasic\s+([A-Za-z0-9+/]{4,}={0,2})`),
			Valid:   basicCredentials,
		},
		{
			Kind: "password", Group: 1, Anchors: []string{"://"},
			// The password runs to the last '@' of the authority, so an
			// unencoded '@' or '#' in it ("p@ss", "p#ss") does not leave a
			// part visible (nor make the rest look like an e-mail address).
			Pattern: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@\[\]]*:([^\s/?\[\]]+)@`),
		},
		{
			Kind: "aws-key", Anchors: []string{"AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "AROA", "APKA"},
			Pattern: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}\b`),
		},
		{
			Kind: "google-key", Anchors: []string{"AIza"},
			Pattern: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`),
		},
		{
			Kind: "github-token", Anchors: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
			Pattern: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`),
		},
		{
			Kind: "slack-token", Anchors: []string{"xox"},
			Pattern: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`),
		},
		{
			Kind: "stripe-key", Anchors: []string{"k_live_", "k_test_"},
			Pattern: regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`),
		},
		// The context words are looked for around a 40-character candidate
		// only: as anchors they would cost more than the rest of the rules.
		{Kind: "aws-secret", Prefilter: longEnoughForAWSSecret, Find: findAWSSecrets},
		// Under (the rules with a key) only under a key that names them:
		// alone these shapes are as often a hash, an order number or an
		// internal extension.
		{Kind: "aws-secret", Under: awsSecretKey, Find: findAWSSecretShapes},
		{Kind: "secret", Under: secretishKey, Find: findHighEntropy},
		// A long token that looks random is a secret under any key or none.
		{Kind: "secret", Prefilter: longEnoughForLooseToken, Find: findLooseTokens},
		// Partial like a card: the last 4 are what a bank statement shows.
		{Kind: "iban", Mask: MaskPartial, Find: findIBANs},
		{Kind: "ssn", Anchors: []string{"-"}, Find: findSSNs},
		{Kind: "ssn", Under: ssnKey, Find: findBareSSNs},
		{Kind: "phone", Find: findPhones},
		{Kind: "phone", Under: phoneKey, Find: findKeyedPhones},
		{
			Kind: "card", Mask: MaskPartial, Prefilter: hasCardRun,
			Find: findCards,
		},
		{
			Kind: "email", Mask: MaskPartial, Anchors: []string{"@"},
			Pattern: regexp.MustCompile(`\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b`),
		},
	}
}

// basicCredentials tells "Basic dXNlcjpwYXNz" (user:pass in base64) from the
// word "basic" followed by another word.
func basicCredentials(s string) bool {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	}
	return err == nil && strings.IndexByte(string(raw), ':') > 0
}
