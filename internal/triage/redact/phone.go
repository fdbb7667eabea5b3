package redact

// E.164 allows at most 15 digits; fewer than 8 after a '+' is a time zone
// offset or an amount, not a phone number.
const (
	minIntlPhoneDigits = 8
	maxPhoneDigits     = 15
	// Under a phone key a national number ("030 1234567") needs no '+'.
	minKeyedPhoneDigits = 7
)

// findPhones returns the spans of phone numbers written in a form that says
// "phone" without a key around it: international (+4915112345678,
// +1 555 123 4567, +44 20 7946 0958, +49 (0)30 1234567) or North American
// ((555) 123-4567, 555-123-4567, 555.123.4567, 1-555-123-4567). A bare run
// of digits is never taken: it is an order number, an epoch or an amount
// as often as a phone number.
func findPhones(s string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c != '+' && c != '(' && !isDigit(c)) || !numberStarts(s, i) {
			continue
		}
		end := 0
		if c == '+' {
			end = intlPhoneEnd(s, i)
		} else {
			end = nanpPhoneEnd(s, i)
		}
		if end > i {
			spans = append(spans, [2]int{i, end})
			i = end - 1
			continue
		}
		for i+1 < len(s) && isDigit(s[i+1]) {
			i++ // never start inside a number
		}
	}
	return spans
}

// findKeyedPhones returns the spans of phone numbers in a value under a
// phone key, where national forms count too ("030 1234567", "0151/2345678").
// A date or a time is not taken for one.
func findKeyedPhones(s string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c != '+' && c != '(' && !isDigit(c)) || !numberStarts(s, i) {
			continue
		}
		from := i
		if c == '+' {
			from++
		}
		end, digits := phoneRun(s, from)
		if digits >= minKeyedPhoneDigits && digits <= maxPhoneDigits && numberEnds(s, end) &&
			(end == len(s) || s[end] != ':') && !isDate(s[i:end]) {
			spans = append(spans, [2]int{i, end})
		}
		// Never start again inside the run: its tail alone is not a phone
		// number when the whole is too long to be one.
		i = max(i, end-1)
		for i+1 < len(s) && isDigit(s[i+1]) {
			i++
		}
	}
	return spans
}

// intlPhoneEnd reads "+" and 8 to 15 digits and returns where the number
// ends (0 when it is none).
func intlPhoneEnd(s string, i int) int {
	if i+1 >= len(s) || s[i+1] < '1' || s[i+1] > '9' {
		return 0
	}
	end, digits := phoneRun(s, i+1)
	if digits < minIntlPhoneDigits || digits > maxPhoneDigits || !numberEnds(s, end) {
		return 0
	}
	return end
}

// phoneRun reads digit groups from i, joined by one separator (space, dash,
// dot, slash) or none next to a group in parentheses ("+49(0)30"), and
// returns where the last group ends and how many digits it read.
func phoneRun(s string, i int) (end, digits int) {
	end = i
	for j := i; j < len(s); {
		open := s[j] == '('
		k := j
		if open {
			k++
		}
		start := k
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k == start || (open && (k >= len(s) || s[k] != ')')) {
			break
		}
		digits += k - start
		if open {
			k++
		}
		end = k
		switch {
		case k+1 < len(s) && isPhoneSep(s[k]) && (isDigit(s[k+1]) || s[k+1] == '('):
			j = k + 1
		case k < len(s) && (s[k] == '(' || (open && isDigit(s[k]))):
			j = k // "+49(0)30", "+49 (0)30"
		default:
			return end, digits
		}
	}
	return end, digits
}

// nanpPhoneEnd reads a North American number at i: an optional "1" and
// separator, then (555) 123-4567 or 555-123-4567 (dots for dashes allowed),
// and returns where it ends (0 when it is none). Only the area code's first
// digit is checked (2-9): test data and real traffic alike use 555 and
// exchanges the numbering plan has not assigned.
func nanpPhoneEnd(s string, i int) int {
	j := i
	if s[j] == '1' && j+2 < len(s) && isPhoneSep(s[j+1]) && (isDigit(s[j+2]) || s[j+2] == '(') {
		j += 2
	}
	area, j := nanpAreaCode(s, j)
	if area < '2' || !digitsAt(s, j, 3) || j+3 >= len(s) || !isPhoneSep(s[j+3]) ||
		s[j+3] == '/' || !digitsAt(s, j+4, 4) || !numberEnds(s, j+8) {
		return 0
	}
	return j + 8
}

// nanpAreaCode reads "(555) " or "555-" (or "555.") at j: the area code's
// first digit (0 when there is none) and where the exchange starts.
func nanpAreaCode(s string, j int) (first byte, next int) {
	switch {
	case j+5 <= len(s) && s[j] == '(' && digitsAt(s, j+1, 3) && s[j+4] == ')':
		next = j + 5
		if next < len(s) && s[next] == ' ' {
			next++
		}
		return s[j+1], next
	case digitsAt(s, j, 3) && j+3 < len(s) && (s[j+3] == '-' || s[j+3] == '.'):
		return s[j], j + 4
	}
	return 0, j
}

func isPhoneSep(c byte) bool { return c == ' ' || c == '-' || c == '.' || c == '/' }

// isDate reports a calendar date as 2024-11-30 or 2024.11.30.
func isDate(s string) bool {
	return len(s) == 10 && digitsAt(s, 0, 4) && digitsAt(s, 5, 2) && digitsAt(s, 8, 2) &&
		(s[4] == '-' || s[4] == '.') && s[7] == s[4]
}
