package redact

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// JSONPath names values inside a JSON document in dot notation:
// customer.tax_id, $.tenant, items[*].card, items[0].sku. Keys compare
// exactly (JSON keys are case-sensitive); [*] is any element of an array.
// It is what redaction.paths and filters.tenant_path are written in.
type JSONPath struct {
	src   string
	steps []pathStep
}

type stepKind int

const (
	stepKey   stepKind = iota // an object key
	stepIndex                 // one array element
	stepAny                   // [*]: every array element
)

type pathStep struct {
	kind  stepKind
	key   string
	index int
}

// ParseJSONPath reads a path in dot notation. A leading "$" or "$." is
// allowed and means the document itself.
func ParseJSONPath(s string) (JSONPath, error) {
	src := strings.TrimSpace(s)
	rest := strings.TrimPrefix(src, "$")
	rest = strings.TrimPrefix(rest, ".")
	bad := func(why string) (JSONPath, error) {
		return JSONPath{}, fmt.Errorf("JSON path %q: %s (write it like customer.tax_id, $.tenant or items[*].card)", s, why)
	}
	if rest == "" {
		return bad("names no value")
	}
	var steps []pathStep
	for part := range strings.SplitSeq(rest, ".") {
		key, brackets, _ := strings.Cut(part, "[")
		if key == "" && (len(steps) > 0 || brackets == "") {
			return bad("has an empty key")
		}
		if key != "" {
			steps = append(steps, pathStep{kind: stepKey, key: key})
		}
		if brackets == "" {
			if strings.Contains(part, "]") {
				return bad("has ']' without '['")
			}
			continue
		}
		for b := range strings.SplitSeq("["+brackets, "[") {
			if b == "" {
				continue
			}
			inner, ok := strings.CutSuffix(b, "]")
			if !ok {
				return bad("has an unclosed '['")
			}
			if inner == "*" {
				steps = append(steps, pathStep{kind: stepAny})
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 {
				return bad(fmt.Sprintf("[%s] is neither [*] nor an index", inner))
			}
			steps = append(steps, pathStep{kind: stepIndex, index: n})
		}
	}
	return JSONPath{src: src, steps: steps}, nil
}

func (p JSONPath) String() string { return p.src }

// IsZero reports a path that was never set.
func (p JSONPath) IsZero() bool { return len(p.steps) == 0 }

// matches reports whether the concrete position at (keys and indexes, as a
// JSON walk meets them) is named by the path.
func (p JSONPath) matches(at []pathStep) bool {
	if len(at) != len(p.steps) {
		return false
	}
	for i, s := range p.steps {
		a := at[i]
		switch s.kind {
		case stepKey:
			if a.kind != stepKey || a.key != s.key {
				return false
			}
		case stepIndex:
			if a.kind != stepIndex || a.index != s.index {
				return false
			}
		case stepAny:
			if a.kind != stepIndex {
				return false
			}
		}
	}
	return true
}

// Values returns the text of every scalar the path names in a JSON document
// (strings as they are, numbers as written, true/false), in document order.
// null, objects, arrays and a document that is not JSON give nothing.
func (p JSONPath) Values(doc []byte) []string {
	if p.IsZero() {
		return nil
	}
	var root any
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	dec.UseNumber()
	if dec.Decode(&root) != nil {
		return nil
	}
	var out []string
	var walk func(v any, steps []pathStep)
	walk = func(v any, steps []pathStep) {
		if len(steps) == 0 {
			switch x := v.(type) {
			case string:
				out = append(out, x)
			case json.Number:
				out = append(out, x.String())
			case bool:
				out = append(out, strconv.FormatBool(x))
			}
			return
		}
		s := steps[0]
		switch x := v.(type) {
		case map[string]any:
			if s.kind == stepKey {
				if child, ok := x[s.key]; ok {
					walk(child, steps[1:])
				}
			}
		case []any:
			switch {
			case s.kind == stepAny:
				for _, e := range x {
					walk(e, steps[1:])
				}
			case s.kind == stepIndex && s.index < len(x):
				walk(x[s.index], steps[1:])
			}
		}
	}
	walk(root, p.steps)
	return out
}

// PathRule masks the whole value (a scalar or a subtree) a JSON path names
// in a JSON payload.
type PathRule struct {
	Path JSONPath
	Mask Mask
}

// WithPaths returns a redactor with r's rules plus the given path rules.
func (r *Redactor) WithPaths(rules []PathRule) *Redactor {
	out := r.With(nil, nil)
	for _, rule := range rules {
		if !rule.Path.IsZero() {
			out.paths = append(out.paths, rule)
		}
	}
	return out
}

// pathRule finds the path rule naming the position at, if any.
func (r *Redactor) pathRule(at []pathStep) (PathRule, bool) {
	if r == nil {
		return PathRule{}, false
	}
	for _, rule := range r.paths {
		if rule.Path.matches(at) {
			return rule, true
		}
	}
	return PathRule{}, false
}
