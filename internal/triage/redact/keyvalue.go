package redact

import "strings"

// keyValues masks the values of secret keys written in free text as
// key=value, key: value or "key": value (logfmt, query strings, YAML, HTTP
// headers, JSON that did not parse). It finds each ':' or '=' and reads the
// key backwards from it: cheaper than a regexp on every string.
func (r *Redactor) keyValues(s string) (string, int) {
	if len(r.keys) == 0 {
		return s, 0
	}
	var b strings.Builder
	n, last, pos := 0, 0, 0
	for pos < len(s) {
		i := strings.IndexAny(s[pos:], ":=")
		if i < 0 {
			break
		}
		sep := pos + i
		pos = sep + 1 // a harmless key's value may hold more pairs: read on inside it
		key, quoted := keyBefore(s[last:sep])
		if key == "" {
			continue
		}
		rule, ok := r.keyRule(key)
		if !ok {
			continue
		}
		start := sep + 1
		for start < len(s) && (s[start] == ' ' || s[start] == '\t') {
			start++
		}
		vStart, vEnd, next := valueSpan(s, start, s[sep], quoted)
		if next > pos {
			pos = next
		}
		if vStart == vEnd {
			continue
		}
		value := s[vStart:vEnd]
		if keepsItsValue(value) || isMask(value) {
			continue
		}
		b.WriteString(s[last:vStart])
		b.WriteString(maskKeyed(value, rule.Mask))
		last = vEnd
		if !strings.Contains(value, redactedPrefix) {
			n++ // a mask inside was counted when it was made
		}
	}
	if last == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// keyBefore returns the key that ends s (before optional spaces and a closing
// quote): letters, digits, _ . - starting with a letter. quoted reports a
// "key" in double quotes, JSON style.
func keyBefore(s string) (key string, quoted bool) {
	end := len(s)
	for end > 0 && (s[end-1] == ' ' || s[end-1] == '\t') {
		end--
	}
	if end > 0 && s[end-1] == '"' {
		quoted = true
		end--
	}
	start := end
	for start > 0 && isKeyByte(s[start-1]) {
		start--
	}
	for start < end && !isLetter(s[start]) {
		start++
	}
	if quoted && (start == 0 || s[start-1] != '"') {
		quoted = false
	}
	return s[start:end], quoted
}

func isKeyByte(c byte) bool {
	return isLetter(c) || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// valueSpan reads the value that starts at i: a quoted string, or up to the
// end of the line for key: value (HTTP headers, YAML), or up to a separator
// for key=value (query strings, logfmt, connection strings). It returns the
// value's bounds (without quotes) and where scanning resumes.
func valueSpan(s string, i int, sep byte, quotedKey bool) (start, end, next int) {
	if i >= len(s) {
		return i, i, i
	}
	if strings.HasPrefix(s[i:], redactedPrefix) {
		// A mask made by a value rule, which may hold a space: read it whole.
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return i, i + j + 1, i + j + 1
		}
	}
	if q := s[i]; q == '"' || q == '\'' {
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case q:
				return i + 1, j, j + 1
			case '\n':
				return i + 1, j, j
			}
		}
		return i + 1, len(s), len(s)
	}
	stop := " \t\r\n&;,\"'"
	switch {
	case sep == ':' && quotedKey:
		stop = "\r\n,}]"
	case sep == ':':
		stop = "\r\n"
	}
	j := i
	for j < len(s) && strings.IndexByte(stop, s[j]) < 0 {
		j++
	}
	end = j
	for end > i && (s[end-1] == ' ' || s[end-1] == '\t') {
		end--
	}
	return i, end, j
}

// keepsItsValue reports values that reveal nothing and say something useful
// ("password": null tells a responder the credential was missing).
func keepsItsValue(v string) bool {
	switch v {
	case "null", "true", "false", "":
		return true
	}
	return false
}

// isMask reports a value that is exactly one mask already.
func isMask(v string) bool {
	return strings.HasPrefix(v, redactedPrefix) && strings.HasSuffix(v, "]") &&
		strings.Count(v, "[") == 1
}
