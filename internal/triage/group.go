package triage

import "sort"

// GroupMessages groups triaged messages by (reason, reason_code): count,
// oldest and newest death time (messages without one are left out of the
// range), the distinct event types, and the members as indexes into ts.
// Largest groups first, then by reason and code, so the order is stable.
func GroupMessages(ts []Triaged) []Group {
	type key struct {
		reason Reason
		code   string
	}
	index := map[key]int{}
	var groups []Group
	events := map[int]map[string]bool{}
	for i, t := range ts {
		k := key{t.Reason, t.ReasonCode}
		gi, ok := index[k]
		if !ok {
			gi = len(groups)
			index[k] = gi
			groups = append(groups, Group{Reason: t.Reason, ReasonCode: t.ReasonCode})
			events[gi] = map[string]bool{}
		}
		g := &groups[gi]
		g.Count++
		g.Members = append(g.Members, i)
		if d := t.DiedAt; !d.IsZero() {
			if g.Oldest.IsZero() || d.Before(g.Oldest) {
				g.Oldest = d
			}
			if g.Newest.IsZero() || d.After(g.Newest) {
				g.Newest = d
			}
		}
		if et := t.Envelope.EventType; et != "" {
			events[gi][et] = true
		}
	}
	for i := range groups {
		types := make([]string, 0, len(events[i]))
		for et := range events[i] {
			types = append(types, et)
		}
		sort.Strings(types)
		groups[i].EventTypes = types
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
