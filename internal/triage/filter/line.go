package filter

import (
	"strings"
)

// ParseLine reads a filter typed on one line, as in the TUI's filter
// bar: expressions separated by spaces (a value with spaces in quotes:
// text~"card declined"), all of which must hold. A word with no operator
// is a free-text search: `declined` is text~declined.
func ParseLine(line string, opts Options) (Filter, error) {
	words := splitLine(line)
	for i, w := range words {
		if !strings.ContainsAny(w, "=!~<>") {
			words[i] = "text~" + w
		}
	}
	return ParseWhere(words, opts)
}

// splitLine splits on spaces outside double or single quotes; the
// quotes stay for the value parser to drop.
func splitLine(line string) []string {
	var words []string
	var cur strings.Builder
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			cur.WriteRune(r)
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
			cur.WriteRune(r)
		case r == ' ' || r == '\t':
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words
}
