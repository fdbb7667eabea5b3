package triage

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// GroupKey names a (reason, reason_code) group as the command line writes
// it: "expired" is every code of that reason, "rejected/address_invalid"
// one code, "maxlen/" the messages with no code.
type GroupKey struct {
	Reason  Reason `json:"reason"`
	Code    string `json:"code"`
	AnyCode bool   `json:"any_code"`
}

// UnmarshalJSON also reads "AnyCode", the key journals held before the
// keys were snake_case ("Reason" and "Code" match case-insensitively).
func (k *GroupKey) UnmarshalJSON(data []byte) error {
	type fields GroupKey // the fields without this method
	var in struct {
		fields
		Before *bool `json:"AnyCode"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*k = GroupKey(in.fields)
	if in.Before != nil {
		k.AnyCode = *in.Before
	}
	return nil
}

// ParseGroupKey reads REASON[/CODE].
func ParseGroupKey(s string) (GroupKey, error) {
	reason, code, hasCode := strings.Cut(s, "/")
	if reason == "" {
		return GroupKey{}, fmt.Errorf("group %q: want REASON[/CODE], e.g. expired, rejected/address_invalid or maxlen/", s)
	}
	return GroupKey{Reason: Reason(reason), Code: code, AnyCode: !hasCode}, nil
}

func (k GroupKey) String() string {
	if k.AnyCode {
		return string(k.Reason)
	}
	return string(k.Reason) + "/" + k.Code
}

// Matches reports whether a triaged message belongs to the group.
func (k GroupKey) Matches(t Triaged) bool {
	return t.Reason == k.Reason && (k.AnyCode || t.ReasonCode == k.Code)
}

// Selection picks the messages of one queue an action applies to: explicit
// ids, or a group, narrowed by Where when set; Where alone selects every
// message it matches. Ids and a group together are the ids of that group a
// screen showed: the plan journals the group they came from.
type Selection struct {
	IDs   []string  `json:"ids"`   // journals before held "IDs": read case-insensitively
	Group *GroupKey `json:"group"` // and "Group"
	// Where is journalled as its expressions; read back, it is a
	// RecordedFilter that matches nothing (a resumed replay goes by its items).
	Where Matcher `json:"where,omitempty"`
}

// Matcher is a filter as a Selection uses it. Package filter parses them
// (filter.Filter); core triage cannot import it, as the filter reads what
// triage derives, so the Selection takes this much of one.
type Matcher interface {
	Match(t Triaged) bool
	Empty() bool     // matches everything
	Exprs() []string // the expressions as written, for a plan or a journal
	String() string  // for a terminal
}

// RecordedFilter is a filter read back from a journal: its expressions say
// what was selected, but the redactor and tenant path it was parsed with
// were not recorded, so it matches nothing (unless it has no expressions,
// like an empty filter). Re-parse Exprs to use it.
type RecordedFilter []string

func (f RecordedFilter) Match(Triaged) bool { return f.Empty() }
func (f RecordedFilter) Empty() bool        { return len(f) == 0 }
func (f RecordedFilter) Exprs() []string    { return slices.Clone([]string(f)) }

// String is the expressions joined by " and ", sanitised for a terminal;
// a parsed filter prints the same way.
func (f RecordedFilter) String() string {
	if f.Empty() {
		return "(no filter)"
	}
	return sanitize.Line(strings.Join(f, " and "))
}

// UnmarshalJSON reads the expressions of a journalled filter.
func (f *RecordedFilter) UnmarshalJSON(data []byte) error {
	var exprs []string
	if err := json.Unmarshal(data, &exprs); err != nil {
		return fmt.Errorf("filter: %w", err)
	}
	*f = exprs
	return nil
}

// UnmarshalJSON reads Where back as the RecordedFilter of its expressions:
// a Matcher cannot be decoded, and a record is all a journal holds.
func (s *Selection) UnmarshalJSON(data []byte) error {
	type fields Selection // the fields without this method
	var in struct {
		fields
		Where *RecordedFilter `json:"where"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*s = Selection(in.fields)
	if in.Where != nil {
		s.Where = *in.Where
	}
	return nil
}

// Validate refuses an empty or ambiguous selection.
func (s Selection) Validate() error {
	switch {
	case len(s.IDs) == 0 && s.Group == nil && (s.Where == nil || s.Where.Empty()):
		return fmt.Errorf("no messages selected: name ids, a group or a filter")
	}
	return nil
}

// Matches reports whether t is selected.
func (s Selection) Matches(t Triaged) bool {
	return s.matches(t, func(id string) bool { return slices.Contains(s.IDs, id) })
}

// Matcher is Matches for many messages: the ids are looked up in a set, so
// a group of 100,000 chosen by its ids (the TUI names them) is tested in
// linear time, not 10^10 comparisons.
func (s Selection) Matcher() func(Triaged) bool {
	if len(s.IDs) < 16 {
		return s.Matches
	}
	set := make(map[string]struct{}, len(s.IDs))
	for _, id := range s.IDs {
		set[id] = struct{}{}
	}
	named := func(id string) bool { _, ok := set[id]; return ok }
	return func(t Triaged) bool { return s.matches(t, named) }
}

func (s Selection) matches(t Triaged, named func(id string) bool) bool {
	if s.Where != nil && !s.Where.Match(t) {
		return false
	}
	if len(s.IDs) == 0 && s.Group == nil {
		return true // the filter alone selects
	}
	if s.Group != nil && !s.Group.Matches(t) {
		return false
	}
	return len(s.IDs) == 0 || named(t.ID)
}

// Apply returns the selected messages in queue order.
func (s Selection) Apply(ts []Triaged) []Triaged { return s.Of(Slice(ts)) }

// Of returns the selected messages of l, in its order.
func (s Selection) Of(l List) []Triaged {
	var out []Triaged
	selected := s.Matcher()
	for i := range l.Len() {
		if t := l.At(i); selected(t) {
			out = append(out, t)
		}
	}
	return out
}

func (s Selection) String() string {
	var what string
	switch {
	case s.Group != nil:
		what = "group " + s.Group.String()
	case len(s.IDs) > 0:
		what = fmt.Sprintf("%d message id(s)", len(s.IDs))
	default:
		what = "every message"
	}
	if s.Where != nil && !s.Where.Empty() {
		what += " where " + s.Where.String()
	}
	return what
}

// MessageMatcher is Matches for messages as they are read, one at a time,
// before any batch they belong to is whole (a replay that selects while it
// holds): each is triaged on its own, without the payload and timeline
// the screens render, under id, its identity so far (the first of its id
// keeps it: FirstSeen).
func (s Selection) MessageMatcher(top Topology) func(m Message, id string) bool {
	r := newRouter(top)
	selected := s.Matcher()
	return func(m Message, id string) bool {
		return selected(analyzeOne(r, m, EnvelopeOf(m), id, nil, false))
	}
}
