// Package filter is the filter language of the headless --where and the
// TUI's filter bar: FIELD OP VALUE expressions over what triage derives
// from a message, with text and tenant read only from the redacted views.
package filter

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// Filter narrows messages by what dlqt derived from them. It is written as
// expressions FIELD OP VALUE (see Fields), all of which must hold:
//
//	reason=expired,rejected     one of a comma-separated list
//	reason_code!=               has a reason_code ("" is none)
//	event_type~order            substring, case-insensitive
//	died>2026-11-30T10:00:00Z   died after a time
//	died<1h                     died less than an hour ago
//	text~"card declined"        in the redacted headers and payload
//
// The headless --where and the TUI's filter bar share it. A Filter is
// immutable; its zero value matches everything.
type Filter struct {
	clauses []clause
	red     *redact.Redactor
	tenant  redact.JSONPath
	cache   *SearchCache
	// detected counts where tenant= found tenants when no path is
	// configured and it looks for the common keys (tenant.go).
	detected *tenantUse
	// resolved answers Match by message id (Resolve); nil: evaluate.
	resolved   map[string]bool
	resolvedOn *resolvedSlice
}

// A Filter is what a triage.Selection narrows by; read back from a journal
// it becomes a triage.RecordedFilter.
var _ triage.Matcher = Filter{}

// Options is what a filter needs besides its expressions.
type Options struct {
	// TenantPath is the JSON path of the tenant in a payload
	// (filters.tenant_path in the config); without it tenant= looks for
	// the common keys (TenantKeys) and TenantNote says which it used.
	TenantPath string
	// Redactor masks what text~ searches and what tenant reads, so that a
	// search never sees more than the screen does. nil means redact.New().
	Redactor *redact.Redactor
	// Now anchors durations (died<1h); zero means the time of parsing.
	Now time.Time
	// Cache, when set, keeps each message's redacted text between filters
	// (see SearchCache); without it text~ and tenant redact on every Match.
	Cache *SearchCache
}

// defaultRedactor is the redactor of a filter parsed without one: the
// default rules.
var defaultRedactor = sync.OnceValue(redact.New)

// ParseWhere parses expressions, each one FIELD OP VALUE; all must hold.
// An unknown field, an operator the field does not take, or a value that
// cannot be read is an error naming the expression.
func ParseWhere(exprs []string, opts Options) (Filter, error) {
	f := Filter{red: opts.Redactor, cache: opts.Cache}
	if f.red == nil {
		f.red = defaultRedactor() // one for every filter, so a SearchCache serves them all
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if strings.TrimSpace(opts.TenantPath) != "" {
		p, err := redact.ParseJSONPath(opts.TenantPath)
		if err != nil {
			return Filter{}, fmt.Errorf("tenant path: %w", err)
		}
		f.tenant = p
	}
	for _, e := range exprs {
		c, err := parseClause(e, opts.Now)
		if err != nil {
			return Filter{}, fmt.Errorf("%q: %w", e, err)
		}
		if c.field.Name == "tenant" && f.tenant.IsZero() && f.detected == nil {
			f.detected = &tenantUse{}
		}
		f.clauses = append(f.clauses, c)
	}
	return f, nil
}

// Empty reports a filter with no expressions: it matches everything.
func (f Filter) Empty() bool { return len(f.clauses) == 0 }

// Match reports whether t satisfies every expression.
func (f Filter) Match(t triage.Triaged) bool { return f.match(&t) }

// MatchAt reports whether f holds for ts[i], without copying the message:
// a screen tests a million of them in a row.
func (f Filter) MatchAt(ts []triage.Triaged, i int) bool { return f.match(&ts[i]) }

func (f *Filter) match(t *triage.Triaged) bool {
	if len(f.clauses) == 0 {
		return true
	}
	if m, ok := f.resolved[t.ID]; ok {
		return m
	}
	in := &matchInput{t: t, f: f}
	for _, c := range f.clauses {
		if !c.holds(in) {
			return false
		}
	}
	return true
}

// Apply returns the messages that match, in their order.
func (f Filter) Apply(ts []triage.Triaged) []triage.Triaged {
	if f.Empty() {
		return ts
	}
	if matched := f.resolvedOn.of(ts); matched != nil {
		n := 0
		for _, m := range matched {
			if m {
				n++
			}
		}
		out := make([]triage.Triaged, 0, n)
		for i, m := range matched {
			if m {
				out = append(out, ts[i])
			}
		}
		return out
	}
	var out []triage.Triaged
	for i := range ts {
		if f.match(&ts[i]) {
			out = append(out, ts[i])
		}
	}
	return out
}

// Narrow keeps the messages of in that f matches and regroups them, so group
// counts and ages are the filtered ones; the batch (what was read) stays.
// The headless commands and the TUI's groups screen both narrow this way.
func (f Filter) Narrow(in triage.Inspection) triage.Inspection {
	if f.Empty() {
		return in
	}
	in.Messages = f.Apply(in.Messages)
	in.Groups = triage.GroupMessages(in.Messages)
	return in
}

// Exprs are the expressions as written, for a plan or a journal entry.
func (f Filter) Exprs() []string {
	out := make([]string, len(f.clauses))
	for i, c := range f.clauses {
		out[i] = c.src
	}
	return out
}

// String is the expressions joined by " and ", sanitised for a terminal:
// as its record, read back from a journal, prints.
func (f Filter) String() string { return triage.RecordedFilter(f.Exprs()).String() }

// MarshalJSON records a filter as its expressions, so a journalled plan
// says what was selected (read back, see triage.Selection.UnmarshalJSON).
func (f Filter) MarshalJSON() ([]byte, error) { return json.Marshal(f.Exprs()) }

// matchInput is one message under test, with the costly views of it
// (redacted payload and headers) made at most once.
type matchInput struct {
	t     *triage.Triaged
	f     *Filter
	seen  *searchEntry
	whole *triage.Triaged // t read back whole, for an index entry
}

// wholeMessage is the message with its body and headers: t itself, or, for
// an index entry of a spilled read, the message read back from disk (and
// nothing derived again: render does what text~ needs). One that cannot
// be read back searches as empty (no text~ match).
func (in *matchInput) wholeMessage() *triage.Triaged {
	if !in.t.Indexed() {
		return in.t
	}
	if in.whole == nil {
		w, err := in.t.WithMessage() // body and headers: render redacts them itself
		if err != nil {
			w = *in.t
		}
		in.whole = &w
	}
	return in.whole
}

// searched returns the redacted views of the message, from the cache when
// the filter has one.
func (in *matchInput) searched() *searchEntry {
	if in.seen == nil {
		if in.f.cache != nil {
			in.seen = in.f.cache.entry(*in.t, in.f.red, in.render)
		} else {
			in.seen = in.render()
		}
	}
	return in.seen
}

// render redacts the payload and headers with the filter's redactor: the
// Triaged's own Payload may come from another one (a discard's sweep uses
// the defaults), and a search must honour the configured rules. The
// haystack is the headers, one "key: value" per line, then the payload,
// lower-cased.
func (in *matchInput) render() *searchEntry {
	t := in.wholeMessage()
	p := t.Payload
	if len(t.Message.Body) > 0 {
		p = triage.RenderMessage(t.Message, in.f.red).Text // through its content encoding
	}
	h, _ := redact.Headers(t.Message.Headers, in.f.red)
	var b strings.Builder
	writeHeaderLines(&b, "", h)
	b.WriteString(p)
	return &searchEntry{payload: p, haystack: strings.ToLower(b.String())}
}

func (in *matchInput) searchText() string { return in.searched().haystack }

// tenants are the values at the tenant path in the redacted payload.
func (in *matchInput) tenants() []string {
	if in.f.tenant.IsZero() {
		return in.detectTenants()
	}
	e := in.searched()
	values := func() []string { return in.f.tenant.Values([]byte(e.payload)) }
	if in.f.cache != nil {
		return in.f.cache.tenants(e, in.f.tenant.String(), values)
	}
	return values()
}
