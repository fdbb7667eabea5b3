package filter

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// Field is one field a filter can test. The TUI lists them as help.
type Field struct {
	Name string
	Help string
	Ops  []string // operators it takes
	kind fieldKind
	// values extracts the field's text ("" when the message has none).
	values func(in *matchInput) []string
	// at extracts the field's time (zero when unknown), for time fields.
	at func(t *triage.Triaged) time.Time
}

type fieldKind int

const (
	textKind    fieldKind = iota // = != ~ !~
	versionKind                  // = != ~ !~, and > < >= <= on numbers
	timeKind                     // > < >= <= on times and ages
)

var (
	textOps    = []string{"=", "!=", "~", "!~"}
	orderOps   = []string{">", "<", ">=", "<="}
	versionOps = append(slices.Clone(textOps), orderOps...)
)

// Fields are the fields of a filter, in the order help lists them.
var Fields = []Field{
	{Name: "reason", Help: "why it is here: rejected, expired, maxlen, delivery_limit, published", Ops: textOps,
		values: func(in *matchInput) []string { return []string{string(in.t.Reason)} }},
	{Name: "reason_code", Help: "the application's stable failure code", Ops: textOps,
		values: func(in *matchInput) []string { return []string{in.t.ReasonCode} }},
	{Name: "event_type", Help: "the envelope's event_type", Ops: textOps,
		values: func(in *matchInput) []string { return []string{in.t.Envelope.EventType} }},
	{Name: "trace_id", Help: "the trace id (traceparent, b3, X-B3-TraceId, uber-trace-id or the envelope's), lower-case hex", Ops: textOps,
		values: func(in *matchInput) []string { return []string{in.t.TraceID} }},
	{Name: "queue", Help: "the queue it died in (x-death[0], else x-first-death-queue)", Ops: textOps,
		values: func(in *matchInput) []string { return []string{triage.DiedIn(*in.t)} }},
	{Name: "died", Help: "its latest death: a time (2026-11-30T10:00:00Z, 2026-11-30) or an age (90m, 2h, 3d)", Ops: orderOps,
		kind: timeKind, at: func(t *triage.Triaged) time.Time { return t.DiedAt }},
	{Name: "first_died", Help: "its first death, like died", Ops: orderOps,
		kind: timeKind, at: func(t *triage.Triaged) time.Time { return triage.FirstDied(*t) }},
	{Name: "schema_version", Help: "the envelope's schema_version; > < >= <= compare numbers", Ops: versionOps,
		kind: versionKind, values: func(in *matchInput) []string { return []string{in.t.Envelope.SchemaVersion} }},
	{Name: "consumer_version", Help: "failure.consumer_version of the envelope", Ops: textOps,
		values: func(in *matchInput) []string {
			if f := in.t.Envelope.Failure; f != nil {
				return []string{f.ConsumerVersion}
			}
			return []string{""}
		}},
	{Name: "tenant", Help: "the value at filters.tenant_path in the redacted payload, else the first of tenant, tenant_id, tenantId, customer_id, account_id, org_id in the envelope, its data/payload object or the headers", Ops: textOps,
		values: func(in *matchInput) []string {
			vs := in.tenants()
			if len(vs) == 0 {
				return []string{""}
			}
			return vs
		}},
	{Name: "text", Help: "free text in the redacted headers and payload", Ops: []string{"~", "!~"},
		values: func(in *matchInput) []string { return []string{in.searchText()} }},
}

// clause is one parsed expression.
type clause struct {
	src    string
	field  *Field
	op     string
	values []string  // = and !=: any of; ~ and !~: one, lower-cased
	at     time.Time // time fields
	num    float64   // version fields with an order operator
}

// operators, longest first so "!=" is not read as "!" and "=".
var operators = []string{"!=", "!~", ">=", "<=", "=", "~", ">", "<"}

func parseClause(expr string, now time.Time) (clause, error) {
	e := strings.TrimSpace(expr)
	i := strings.IndexAny(e, "=!~<>")
	if i <= 0 {
		return clause{}, fmt.Errorf("want FIELD OP VALUE, e.g. reason=expired (operators %s)", strings.Join(operators, " "))
	}
	name := strings.TrimSpace(e[:i])
	var op string
	for _, o := range operators {
		if strings.HasPrefix(e[i:], o) {
			op = o
			break
		}
	}
	if op == "" {
		return clause{}, fmt.Errorf("want FIELD OP VALUE, e.g. reason=expired (operators %s)", strings.Join(operators, " "))
	}
	value := strings.TrimSpace(e[i+len(op):])
	field := findField(name)
	if field == nil {
		return clause{}, fmt.Errorf("unknown field %q (fields: %s)", name, strings.Join(FieldNames(), ", "))
	}
	if !slices.Contains(field.Ops, op) {
		return clause{}, fmt.Errorf("%s takes %s, not %s", name, strings.Join(field.Ops, " "), op)
	}
	c := clause{src: name + op + value, field: field, op: op}
	switch {
	case field.kind == timeKind:
		at, age, err := parseWhen(value, now)
		if err != nil {
			return clause{}, fmt.Errorf("%s: %w", name, err)
		}
		c.at = at
		if age { // younger than an age is later than now-age
			c.op = map[string]string{">": "<", "<": ">", ">=": "<=", "<=": ">="}[op]
		}
	case field.kind == versionKind && slices.Contains(orderOps, op):
		n, ok := versionNumber(value)
		if !ok {
			return clause{}, fmt.Errorf("%s%s compares numbers, got %q", name, op, value)
		}
		c.num = n
	case op == "~" || op == "!~":
		if value == "" {
			return clause{}, fmt.Errorf("%s%s needs text to look for", name, op)
		}
		c.values = []string{strings.ToLower(unquote(value))}
	default:
		c.values = strings.Split(unquote(value), ",")
		for i := range c.values {
			c.values[i] = strings.TrimSpace(c.values[i])
		}
		if name == "reason" {
			for _, v := range c.values {
				if !knownReason(v) {
					return clause{}, fmt.Errorf("unknown reason %q (reasons: %s)", v, strings.Join(reasonNames(), ", "))
				}
			}
		}
	}
	return c, nil
}

func (c clause) holds(in *matchInput) bool {
	if c.field.kind == timeKind {
		at := c.field.at(in.t)
		if at.IsZero() {
			return false // an unknown time is in no range
		}
		return compareOrder(at.Compare(c.at), c.op)
	}
	values := c.field.values(in)
	switch c.op {
	case "=":
		return anyOf(values, func(v string) bool { return slices.Contains(c.values, v) })
	case "!=":
		return !anyOf(values, func(v string) bool { return slices.Contains(c.values, v) })
	case "~":
		return anyOf(values, func(v string) bool { return strings.Contains(strings.ToLower(v), c.values[0]) })
	case "!~":
		return !anyOf(values, func(v string) bool { return strings.Contains(strings.ToLower(v), c.values[0]) })
	}
	return anyOf(values, func(v string) bool { // a version order
		n, ok := versionNumber(v)
		return ok && compareOrder(cmpFloat(n, c.num), c.op)
	})
}

func compareOrder(cmp int, op string) bool {
	switch op {
	case ">":
		return cmp > 0
	case "<":
		return cmp < 0
	case ">=":
		return cmp >= 0
	case "<=":
		return cmp <= 0
	}
	return false
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func anyOf(vs []string, ok func(string) bool) bool {
	return slices.ContainsFunc(vs, ok)
}

// versionNumber reads a schema version as a number: 3, "3", 2.1, v3.
func versionNumber(s string) (float64, bool) {
	s = strings.TrimLeft(strings.TrimSpace(s), "vV")
	if !numericText(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

func numericText(s string) bool {
	if s == "" {
		return false
	}
	dot := false
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0:
			dot = true
		default:
			return false
		}
	}
	return true
}

// unquote drops one pair of surrounding double or single quotes.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

func findField(name string) *Field {
	for i := range Fields {
		if Fields[i].Name == name {
			return &Fields[i]
		}
	}
	return nil
}

// FieldNames lists the field names, for help and errors.
func FieldNames() []string {
	out := make([]string, len(Fields))
	for i, f := range Fields {
		out[i] = f.Name
	}
	return out
}

func reasonNames() []string {
	return []string{string(triage.ReasonRejected), string(triage.ReasonExpired), string(triage.ReasonMaxlen), string(triage.ReasonDeliveryLimit), string(triage.ReasonPublished)}
}

func knownReason(s string) bool { return slices.Contains(reasonNames(), s) }

// parseWhen reads a time (RFC 3339, or a date meaning its midnight UTC) or
// an age (Go durations plus d for days): died<1h means "less than an hour
// ago", that is, after now-1h, so an age turns the comparison around.
func parseWhen(s string, now time.Time) (at time.Time, age bool, err error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, false, nil
		}
	}
	if d, ok := parseAge(s); ok {
		return now.Add(-d), true, nil
	}
	return time.Time{}, false, fmt.Errorf("%q is neither a time (2026-11-30T10:00:00Z, 2026-11-30) nor an age (90m, 2h, 3d)", s)
}

func parseAge(s string) (time.Duration, bool) {
	if days, ok := strings.CutSuffix(s, "d"); ok && numericText(days) {
		n, err := strconv.ParseFloat(days, 64)
		return time.Duration(n * float64(24*time.Hour)), err == nil && n > 0 && n < 1e5
	}
	d, err := time.ParseDuration(s)
	return d, err == nil && d > 0
}

// writeHeaderLines writes a header table as "key: value" lines, keys in
// order, nested tables as "outer.inner: value".
func writeHeaderLines(b *strings.Builder, prefix string, h triage.Headers) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		writeHeaderValue(b, prefix+k, h[k])
	}
}

func writeHeaderValue(b *strings.Builder, key string, v any) {
	switch x := v.(type) {
	case triage.Headers:
		writeHeaderLines(b, key+".", x)
	case []any:
		for _, e := range x {
			writeHeaderValue(b, key, e)
		}
	case time.Time:
		fmt.Fprintf(b, "%s: %s\n", key, x.UTC().Format(time.RFC3339))
	default:
		fmt.Fprintf(b, "%s: %v\n", key, x)
	}
}
