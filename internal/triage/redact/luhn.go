package redact

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

// findCards returns the spans of card numbers in s. A card is 13 to 19
// digits made of whole groups of a run of digit groups joined by single
// spaces or dashes, so "ref 0 4111 1111 1111 1111 0" still yields the card,
// while digits are never taken from the middle of a longer number.
func findCards(s string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); {
		if !isDigit(s[i]) || (i > 0 && isWordByte(s[i-1])) || ibanTail(s, i) {
			i++
			continue
		}
		var digits []int        // byte offset of each digit of the run
		var starts, ends []bool // whether a digit starts or ends its group
		j := i
		for {
			for first := true; j < len(s) && isDigit(s[j]); first = false {
				digits = append(digits, j)
				starts = append(starts, first)
				ends = append(ends, false)
				j++
			}
			ends[len(ends)-1] = true
			if j+1 < len(s) && (s[j] == ' ' || s[j] == '-') && isDigit(s[j+1]) {
				j++
				continue
			}
			break
		}
		if j < len(s) && isWordByte(s[j]) {
			ends[len(ends)-1] = false // "...1111abc" is an identifier
		}
		spans = appendCards(spans, s, digits, starts, ends)
		i = j
	}
	return spans
}

// appendCards picks the cards out of one run: at each group start, the
// longest valid number that ends at a group end.
func appendCards(spans [][2]int, s string, digits []int, starts, ends []bool) [][2]int {
	buf := make([]byte, 0, 19)
	for a := 0; a < len(digits); a++ {
		if !starts[a] {
			continue
		}
		for z := min(a+18, len(digits)-1); z >= a+12; z-- {
			if !ends[z] {
				continue
			}
			buf = buf[:0]
			for _, off := range digits[a : z+1] {
				buf = append(buf, s[off])
			}
			if buf[0] >= '2' && buf[0] <= '6' && luhn(buf) {
				spans = append(spans, [2]int{digits[a], digits[z] + 1})
				a = z // go on after this card
				break
			}
		}
	}
	return spans
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isWordByte is what regexp's \b calls a word character.
func isWordByte(c byte) bool { return isDigit(c) || isLetter(c) || c == '_' }
