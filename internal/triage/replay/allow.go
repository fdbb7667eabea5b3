package replay

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/dlqt/dlqt/internal/triage"
)

// Allowed reports whether route matches one of the glob patterns of the
// replay allowlist, over EXCHANGE:ROUTING_KEY. A bad pattern is an error,
// never a silent match, even after a pattern that matched.
func Allowed(route triage.Route, allow []string) (bool, error) {
	res := make([]*regexp.Regexp, len(allow))
	for i, p := range allow {
		re, err := compileGlob(p)
		if err != nil {
			return false, fmt.Errorf("replay.allow pattern %q: %w", p, err)
		}
		res[i] = re
	}
	for _, re := range res {
		if re.MatchString(route.String()) {
			return true, nil
		}
	}
	return false, nil
}

// compileGlob reads the path.Match syntax (*, ?, [class], [^class],
// \escape) with one difference: routing keys are not paths, so * and ?
// match '/' too (with path.Match, "orders:*" missed "orders:eu/created").
// The glob becomes an anchored RE2 expression, so matching stays linear.
func compileGlob(p string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i++; i == len(rs) {
				return nil, path.ErrBadPattern
			}
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case '[':
			class, n, err := globClass(rs[i+1:])
			if err != nil {
				return nil, err
			}
			b.WriteString(class)
			i += n
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`\z`)
	return regexp.Compile(b.String())
}

// globClass reads a character class after its '[' and returns it as an
// RE2 class and the runes it took, the closing ']' included.
func globClass(rs []rune) (string, int, error) {
	var b strings.Builder
	b.WriteString("[")
	i := 0
	if i < len(rs) && rs[i] == '^' {
		b.WriteString("^")
		i++
	}
	char := func() (rune, bool) { // one literal, \ escaping
		if i < len(rs) && rs[i] == '\\' {
			i++
		}
		if i >= len(rs) {
			return 0, false
		}
		i++
		return rs[i-1], true
	}
	ranges := 0
	for i < len(rs) && rs[i] != ']' {
		lo, ok := char()
		if !ok {
			return "", 0, path.ErrBadPattern
		}
		hi := lo
		if i < len(rs) && rs[i] == '-' {
			i++
			if hi, ok = char(); !ok || hi < lo {
				return "", 0, path.ErrBadPattern
			}
		}
		fmt.Fprintf(&b, `\x{%x}-\x{%x}`, lo, hi)
		ranges++
	}
	if i >= len(rs) || ranges == 0 {
		return "", 0, path.ErrBadPattern
	}
	b.WriteString("]")
	return b.String(), i + 1, nil
}
