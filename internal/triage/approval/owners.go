// Package approval is the four-eyes workflow around the actions that change
// a queue: who owns a message (owners), which actions need a second person
// (the policy), and proposals, which wait for an approver before they run.
// It does no I/O: proposals live in the journal as records and are folded
// back from them.
package approval

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/dlqt/dlqt/internal/triage"
)

// OwnerRule gives the messages of an event type or a queue (globs, as in
// path.Match) to a team. One of EventType and Queue is set.
type OwnerRule struct {
	EventType string
	Queue     string
	Team      string
}

// Check says what is wrong with a rule, for the config file's error.
func (r OwnerRule) Check() error {
	switch {
	case strings.TrimSpace(r.Team) == "":
		return fmt.Errorf("team is required")
	case r.EventType == "" && r.Queue == "":
		return fmt.Errorf("match needs event_type or queue")
	case r.EventType != "" && r.Queue != "":
		return fmt.Errorf("match takes event_type or queue, not both (write two rules)")
	}
	for _, glob := range []string{r.EventType, r.Queue} {
		if _, err := path.Match(glob, ""); err != nil {
			return fmt.Errorf("bad glob %q: %w", glob, err)
		}
	}
	return nil
}

func (r OwnerRule) matches(queue, eventType string) bool {
	if r.EventType != "" {
		ok, _ := path.Match(r.EventType, eventType)
		return ok && eventType != ""
	}
	ok, _ := path.Match(r.Queue, queue)
	return ok
}

// Owners are the config's rules in order: the first that matches a message
// names its team.
type Owners []OwnerRule

// Of is the team owning a message of eventType parked in queue, "" when no
// rule matches.
func (o Owners) Of(queue, eventType string) string {
	for _, r := range o {
		if r.matches(queue, eventType) {
			return r.Team
		}
	}
	return ""
}

// Teams are the distinct teams owning the messages, sorted; a message no
// rule matches adds nothing.
func (o Owners) Teams(queue string, msgs []triage.Triaged) []string {
	var teams []string
	for _, t := range msgs {
		if team := o.Of(queue, t.Envelope.EventType); team != "" && !slices.Contains(teams, team) {
			teams = append(teams, team)
		}
	}
	slices.Sort(teams)
	return teams
}

// OfGroup names the owners of a group's event types (and of the queue
// for messages without one), joined: "shipping" or "billing, shipping".
func (o Owners) OfGroup(queue string, g triage.Group) string {
	var teams []string
	add := func(team string) {
		if team != "" && !slices.Contains(teams, team) {
			teams = append(teams, team)
		}
	}
	for _, et := range g.EventTypes {
		add(o.Of(queue, et))
	}
	if len(g.EventTypes) == 0 {
		add(o.Of(queue, ""))
	}
	slices.Sort(teams)
	return strings.Join(teams, ", ")
}
