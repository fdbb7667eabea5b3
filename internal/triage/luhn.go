package triage

// validCard reports whether s (digits with optional spaces or dashes) looks
// like a payment card number: 13 to 19 digits, a major-network first digit
// (2-6: Mastercard, Amex/Diners/JCB, Visa, Mastercard/Maestro, Discover/
// UnionPay) and a valid Luhn check digit. The first-digit test keeps epoch
// milliseconds and nanoseconds (17...) from passing by the 1-in-10 Luhn chance.
func validCard(s string) bool {
	digits := make([]byte, 0, 19)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
		case c == ' ' || c == '-':
		default:
			return false
		}
	}
	if len(digits) < 13 || len(digits) > 19 || digits[0] < '2' || digits[0] > '6' {
		return false
	}
	return luhn(digits)
}

// luhn checks the mod-10 check digit of a string of ASCII digits.
func luhn(digits []byte) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// hasCardRun reports a run of at least 13 digits, possibly split by spaces or
// dashes: the only text worth the card pattern. Timestamps and UUIDs break
// their digit runs with letters, colons or dots.
func hasCardRun(s string) bool {
	digits := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
			if digits >= 13 {
				return true
			}
		case c == ' ' || c == '-':
		default:
			digits = 0
		}
	}
	return false
}
