package redact

// ibanLengths is the length of an IBAN in each country of the ISO 13616
// registry (SWIFT's IBAN Registry). A country code that is not in it, or a
// length that does not match, is not an IBAN however its checksum comes out.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
	"BH": 22, "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24,
	"DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
	"FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
	"GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
	"LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20,
	"MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
	"PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
	"SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
	"YE": 30,
}

// findIBANs returns the spans of IBANs in s, written whole
// (DE89370400440532013000) or in groups of four split by single spaces
// (DE89 3704 0044 0532 0130 00), as ISO 13616 prints them. A candidate must
// have its country's length exactly and pass the mod-97 check, so an order
// number or a hash that starts like one stays readable.
func findIBANs(s string) [][2]int {
	var spans [][2]int
	for i := 0; i+4 <= len(s); i++ {
		if !isUpper(s[i]) || !isUpper(s[i+1]) || !isDigit(s[i+2]) || !isDigit(s[i+3]) ||
			(i > 0 && isWordByte(s[i-1])) {
			continue
		}
		n, ok := ibanLengths[s[i:i+2]]
		if !ok {
			continue
		}
		if end, ok := ibanEnd(s, i, n); ok {
			spans = append(spans, [2]int{i, end})
			i = end - 1
		}
	}
	return spans
}

// ibanEnd reads an IBAN of n characters that starts at i, whole or in
// groups of four, and returns where it ends if it is a valid one.
func ibanEnd(s string, i, n int) (int, bool) {
	grouped := i+4 < len(s) && s[i+4] == ' '
	buf := make([]byte, 0, 34)
	j := i
	for len(buf) < n {
		if grouped && len(buf) > 0 && len(buf)%4 == 0 {
			if j >= len(s) || s[j] != ' ' {
				return 0, false
			}
			j++
		}
		if j >= len(s) || (!isUpper(s[j]) && !isDigit(s[j])) {
			return 0, false
		}
		buf = append(buf, s[j])
		j++
	}
	if j < len(s) && isWordByte(s[j]) {
		return 0, false
	}
	return j, ibanChecksum(buf)
}

// ibanChecksum is the ISO 7064 mod 97-10 check of ISO 13616: the first four
// characters moved to the end, letters as 10 to 35, the number mod 97 is 1.
func ibanChecksum(iban []byte) bool {
	rem := 0
	for k := range iban {
		c := iban[(k+4)%len(iban)]
		if isDigit(c) {
			rem = (rem*10 + int(c-'0')) % 97
		} else {
			rem = (rem*100 + int(c-'A') + 10) % 97
		}
	}
	return rem == 1
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// ibanTail reports that the digit group at i continues a sequence of
// four-character groups headed like an IBAN ("DE89 3704 0044 ..."), so a
// mistyped IBAN is not taken for the card its digit groups may spell.
func ibanTail(s string, i int) bool {
	for range 9 {
		if i < 5 || s[i-1] != ' ' {
			return false
		}
		i -= 5
		for k := i; k < i+4; k++ {
			if !isUpper(s[k]) && !isDigit(s[k]) {
				return false
			}
		}
		starts := i == 0 || !isWordByte(s[i-1])
		if _, ok := ibanLengths[s[i:i+2]]; ok && starts && isDigit(s[i+2]) && isDigit(s[i+3]) {
			return true
		}
		if !starts {
			return false
		}
	}
	return false
}
