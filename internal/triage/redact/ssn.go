package redact

// validSSN applies the Social Security Administration's rules to the nine
// digits of a US SSN: the area is never 000, 666 or 900-999, the group never
// 00 and the serial never 0000. They turn away most nine-digit ids and dates.
func validSSN(d []byte) bool {
	if len(d) != 9 {
		return false
	}
	area := string(d[:3])
	return area != "000" && area != "666" && d[0] != '9' &&
		string(d[3:5]) != "00" && string(d[5:]) != "0000"
}

// findSSNs returns the spans of SSNs written AAA-GG-SSSS. Without the dashes
// nine digits are an order number as often as an SSN: findBareSSNs looks for
// those only under a key that names one.
func findSSNs(s string) [][2]int {
	var spans [][2]int
	for i := 0; i+11 <= len(s); i++ {
		if s[i+3] != '-' || s[i+6] != '-' || !digitsAt(s, i, 3) || !digitsAt(s, i+4, 2) ||
			!digitsAt(s, i+7, 4) || !numberStarts(s, i) || !numberEnds(s, i+11) {
			continue
		}
		d := []byte{s[i], s[i+1], s[i+2], s[i+4], s[i+5], s[i+7], s[i+8], s[i+9], s[i+10]}
		if validSSN(d) {
			spans = append(spans, [2]int{i, i + 11})
			i += 10
		}
	}
	return spans
}

// findBareSSNs returns the spans of runs of exactly nine digits that pass
// validSSN, for values under a key that names an SSN or a secret.
func findBareSSNs(s string) [][2]int {
	var spans [][2]int
	for i := 0; i+9 <= len(s); i++ {
		if !digitsAt(s, i, 9) || !numberStarts(s, i) || !numberEnds(s, i+9) {
			continue
		}
		if validSSN([]byte(s[i : i+9])) {
			spans = append(spans, [2]int{i, i + 9})
			i += 8
		}
	}
	return spans
}

// digitsAt reports n ASCII digits at s[i:].
func digitsAt(s string, i, n int) bool {
	if i < 0 || i+n > len(s) {
		return false
	}
	for _, c := range []byte(s[i : i+n]) {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// numberStarts reports that a number may start at i: it is not glued to a
// word, nor the tail of a longer number ("7-123-45-6789", "1.123-45-6789").
func numberStarts(s string, i int) bool {
	if i == 0 {
		return true
	}
	c := s[i-1]
	if isWordByte(c) || c == '+' {
		return false
	}
	return !((c == '-' || c == '.' || c == '/') && i >= 2 && isDigit(s[i-2]))
}

// numberEnds reports that a number may end at i: what follows is neither a
// word nor more of the number ("...-6789-01", "...6789.5").
func numberEnds(s string, i int) bool {
	if i >= len(s) {
		return true
	}
	c := s[i]
	if isWordByte(c) {
		return false
	}
	return !((c == '-' || c == '.' || c == '/') && i+1 < len(s) && isDigit(s[i+1]))
}
