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
	// A token that looks random wherever it stands: 32 to 128 characters of
	// base64 (standard or URL) alphabet with upper case, lower case and
	// digits. 32 is past every id shape dlqt leaves readable but a UUID or a
	// digest, which are hex of one case; 128 leaves a longer blob (an
	// embedded file) readable, as a secret that long has a rule of its own
	// (a JWT, a key block).
	minLooseToken = 32
	maxLooseToken = 128
	// Randomness is two measures added: the share of neighbouring letters
	// and digits that change class (upper, lower, digit), about 0.6 in a
	// random token against 0.15 to 0.45 in a path or a camelCase name, and
	// the entropy in bits a character, 4.5 to 5 for 32 to 40 random
	// characters against 3.9 to 4.3 for a name or a path, whose letters
	// repeat. Of 100,000 random tokens 0.15% of those of 32 characters and
	// 0.001% of those of 40 fall below this sum; the names and paths of the
	// corpus (corpus_test.go) stay at most 0.6 above 4.
	minRandomness = 4.65
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
	return runsOf(s, isBase64Byte, func(i, j int) bool {
		return j-i == awsSecretLen && (i == 0 || !isTokenByte(s[i-1])) &&
			(j == len(s) || (!isTokenByte(s[j]) && s[j] != '=')) && mixedCase(s[i:j])
	})
}

// runsOf returns the spans of the longest runs of bytes in the alphabet
// that keep accepts (given the run's [i, j)).
func runsOf(s string, inAlphabet func(byte) bool, keep func(i, j int) bool) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); {
		if !inAlphabet(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && inAlphabet(s[j]) {
			j++
		}
		if keep(i, j) {
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
	return runsOf(s, isTokenByte, func(i, j int) bool {
		tok := s[i:j]
		return len(tok) >= minSecretLen && !strings.HasPrefix(tok, "REDACTED") &&
			(mixedCase(tok) || (len(tok) >= 32 && isHexDigest(tok))) && entropy(tok) >= minSecretEntropy
	})
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

// longEnoughForLooseToken is the loose-token rule's prefilter.
func longEnoughForLooseToken(s string) bool { return len(s) >= minLooseToken }

// isLooseTokenByte is the base64 alphabet, standard and URL. A dot is not
// in it: dotted names (a Java class, a host) are words, not a token.
func isLooseTokenByte(c byte) bool { return isBase64Byte(c) || c == '-' || c == '_' }

// findLooseTokens returns the spans of random-looking tokens standing
// alone, under any key or none: a secret of a service with no rule of its
// own, or an AWS secret access key with nothing near it that says so.
// Hex digests and UUIDs (one case), order numbers and versions (no lower
// case, or too short), paths and names (few class changes, letters that
// repeat: see minRandomness) are not taken.
func findLooseTokens(s string) [][2]int {
	return runsOf(s, isLooseTokenByte, func(i, j int) bool { return looksRandom(s[i:j]) })
}

func looksRandom(tok string) bool {
	tok = strings.TrimRight(tok, "=") // base64 padding
	return len(tok) >= minLooseToken && len(tok) <= maxLooseToken && mixedCase(tok) &&
		classChangeRate(tok)+entropy(tok) >= minRandomness
}

// classChangeRate is the share of neighbouring letters and digits (others
// skipped) whose class, upper, lower or digit, differs.
func classChangeRate(s string) float64 {
	changes, pairs := 0, 0
	prev := byte(0)
	for i := 0; i < len(s); i++ {
		c := charClass(s[i])
		if c == 0 {
			continue
		}
		if prev != 0 {
			pairs++
			if c != prev {
				changes++
			}
		}
		prev = c
	}
	if pairs == 0 {
		return 0
	}
	return float64(changes) / float64(pairs)
}

// charClass is 'A' for upper case, 'a' for lower case, '0' for a digit and
// 0 for anything else.
func charClass(c byte) byte {
	switch {
	case isUpper(c):
		return 'A'
	case c >= 'a' && c <= 'z':
		return 'a'
	case isDigit(c):
		return '0'
	}
	return 0
}
