package triage

import "sort"

// GroupMessages groups triaged messages by (reason, reason_code): count,
// oldest and newest death time (messages without one are left out of the
// range), the distinct event types, and the members as indexes into ts.
// Largest groups first, then by reason and code, so the order is stable.
func GroupMessages(ts []Triaged) []Group {
	g := NewGrouper(true)
	for i := range ts {
		g.Add(&ts[i], i)
	}
	return g.Groups()
}

type groupKey struct {
	reason Reason
	code   string
}

// Grouper groups messages one at a time, as a streamed read triages them,
// keeping per group only its counts, times and event types (and, when asked,
// the members' indexes): its memory grows with the number of groups.
type Grouper struct {
	members bool
	index   map[groupKey]int
	groups  []Group
	events  []map[string]bool
}

// NewGrouper returns an empty Grouper; members says whether groups list
// the indexes of their messages.
func NewGrouper(members bool) *Grouper {
	return &Grouper{members: members, index: map[groupKey]int{}}
}

// Add counts t, the i-th message, into its group.
func (gr *Grouper) Add(t *Triaged, i int) {
	k := groupKey{t.Reason, t.ReasonCode}
	gi, ok := gr.index[k]
	if !ok {
		gi = len(gr.groups)
		gr.index[k] = gi
		gr.groups = append(gr.groups, Group{Reason: t.Reason, ReasonCode: t.ReasonCode,
			ExceptionType: t.ExceptionType, ThrownAt: t.ThrownAt})
		gr.events = append(gr.events, map[string]bool{})
	}
	g := &gr.groups[gi]
	g.Count++
	if gr.members {
		g.Members = append(g.Members, i)
	}
	if d := t.DiedAt; !d.IsZero() {
		if g.Oldest.IsZero() || d.Before(g.Oldest) {
			g.Oldest = d
		}
		if g.Newest.IsZero() || d.After(g.Newest) {
			g.Newest = d
		}
	}
	if et := t.Envelope.EventType; et != "" {
		gr.events[gi][et] = true
	}
}

// Groups returns the groups so far, largest first, then by reason and code.
func (gr *Grouper) Groups() []Group {
	if len(gr.groups) == 0 {
		return nil
	}
	groups := make([]Group, len(gr.groups))
	copy(groups, gr.groups)
	for i := range groups {
		types := make([]string, 0, len(gr.events[i]))
		for et := range gr.events[i] {
			types = append(types, et)
		}
		sort.Strings(types)
		groups[i].EventTypes = types
		if groups[i].Members != nil {
			groups[i].Members = groups[i].Members[:len(groups[i].Members):len(groups[i].Members)]
		}
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Reason != b.Reason {
			return a.Reason < b.Reason
		}
		return a.ReasonCode < b.ReasonCode
	})
	return groups
}
