package redact

import (
	"math"
	"strings"
)

const (
	awsSecretLen = 40
	// awsContext is how far before (and, less, after) a 40-character
	// candidate an AWS key id or the word aws/secret makes it an AWS secret.
	awsContextBefore = 160
	awsContextAfter  = 40
	// A secret-looking value under a secret-ish key: at least 16 characters
	// of token alphabet with more than 3 bits of entropy per character.
	minSecretLen     = 16
	minSecretEntropy = 3.0
)

// awsKeyIDs are the prefixes of AWS access key ids (see the aws-key rule).
var awsKeyIDs = []string{"AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "AROA", "APKA"}

func longEnoughForAWSSecret(s string) bool { return len(s) >= awsSecretLen }

func isBase64Byte(c byte) bool { return isDigit(c) || isLetter(c) || c == '+' || c == '/' }

// findAWSSecretShapes returns the spans of exactly 40 characters of base64
// alphabet with upper case, lower case and a digit, standing alone: the
// shape of an AWS secret access key. A git SHA (hex, one case) or a longer
// base64 blob does not have it.
func findAWSSecretShapes(s string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); {
		if !isBase64Byte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isBase64Byte(s[j]) {
			j++
		}
		if j-i == awsSecretLen && (i == 0 || !isTokenByte(s[i-1])) &&
			(j == len(s) || (!isTokenByte(s[j]) && s[j] != '=')) && mixedCase(s[i:j]) {
			spans = append(spans, [2]int{i, j})
		}
		i = j
	}
	return spans
}

// findAWSSecrets returns the AWS secret shapes that have an AWS key id, or
// the word aws or secret, close before or just after them ("AKIA... /
// wJalrXUtn...", "aws secret: wJalrXUtn..."). Under an aws or secret key
// the shape alone is enough (the keyed rule).
func findAWSSecrets(s string) [][2]int {
	spans := findAWSSecretShapes(s)
	out := spans[:0]
	for _, sp := range spans {
		if awsContextNear(s[max(0, sp[0]-awsContextBefore):sp[0]]) ||
			awsContextNear(s[sp[1]:min(len(s), sp[1]+awsContextAfter)]) {
			out = append(out, sp)
		}
	}
	return out
}

// awsContextNear reports an AWS key id, or the word aws or secret, in s; a
// key id already masked ([REDACTED:aws-key]) still says "aws".
func awsContextNear(s string) bool {
	lower := strings.ToLower(s)
	return strings.Contains(lower, "aws") || strings.Contains(lower, "secret") || containsAny(s, awsKeyIDs)
}

// isTokenByte is the alphabet of API tokens and base64 (standard and URL).
func isTokenByte(c byte) bool {
	return isDigit(c) || isLetter(c) || strings.IndexByte("+/=_-.~", c) >= 0
}

// mixedCase reports upper case, lower case and a digit in s: random base64
// has all three, words, hex digests and ids seldom do.
func mixedCase(s string) bool {
	var upper, lower, digit bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		upper = upper || isUpper(c)
		lower = lower || (c >= 'a' && c <= 'z')
		digit = digit || isDigit(c)
	}
	return upper && lower && digit
}

// findHighEntropy returns the spans of secret-looking tokens, for values
// under a secret-ish key whose name alone does not make the whole value a
// secret ("signing_key_id", "auth_header", "webhook_secret_ref"): runs of the
// token alphabet of 16 characters or more that are random-looking (mixed
// case and digits) or long hex (32 or more), with enough entropy.
func findHighEntropy(s string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); {
		if !isTokenByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isTokenByte(s[j]) {
			j++
		}
		if tok := s[i:j]; len(tok) >= minSecretLen && !strings.HasPrefix(tok, "REDACTED") &&
			(mixedCase(tok) || (len(tok) >= 32 && isHexDigest(tok))) && entropy(tok) >= minSecretEntropy {
			spans = append(spans, [2]int{i, j})
		}
		i = j
	}
	return spans
}

// isHexDigest reports hex digits only, with a letter and a digit among them.
func isHexDigest(s string) bool {
	var letter, digit bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			digit = true
		case (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'):
			letter = true
		default:
			return false
		}
	}
	return letter && digit
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
