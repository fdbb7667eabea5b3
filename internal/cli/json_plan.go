package cli

import (
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// PlanJSON is what `dlqt discard` and `dlqt replay` print with --json
// instead of running, the part both share: the object a script checks
// before it passes --yes. Lists are [] when empty, never null; Problems
// empty means --yes may run.
type PlanJSON struct {
	Action    string   `json:"action"` // "discard" or "replay"
	Vhost     string   `json:"vhost"`
	Queue     string   `json:"queue"`
	Selection string   `json:"selection"` // as the journal's decision names it
	Count     int      `json:"count"`
	IDs       []string `json:"ids"`
	// Missing are selected ids the read did not find; Truncated says the
	// read stopped at --limit, so a group covers the messages read only.
	Missing   []string `json:"missing"`
	Read      int      `json:"read"`
	Depth     int      `json:"depth"`
	Truncated bool     `json:"truncated"`
	Problems  []string `json:"problems"`
}

// DiscardPlanJSON is `dlqt discard QUEUE ... --json`.
type DiscardPlanJSON struct {
	PlanJSON
	Reason string `json:"reason"` // what the journal will say
}

// ReplayPlanJSON is `dlqt replay QUEUE ... --json`.
type ReplayPlanJSON struct {
	PlanJSON
	ReplayID     string               `json:"replay_id"`
	Destinations []replay.Destination `json:"destinations"`
	Unroutable   []string             `json:"unroutable"` // ids with no known route (need --to)
	Allowed      bool                 `json:"allowed"`    // every destination allowed
	Options      replay.Options       `json:"options"`
	// Revisions maps each edited id to the revision its copy will carry
	// (dlqt edit); {} when none.
	Revisions map[string]string `json:"revisions"`
}

// orEmpty keeps the contract's [] for a nil list, sanitised for a terminal.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return sanitize.Lines(s)
}

func basePlan(action string, in triage.Inspection, vhost, queue, selection string, ids, missing []string) PlanJSON {
	return PlanJSON{
		Action: action, Vhost: sanitize.Line(vhost), Queue: sanitize.Line(queue), Selection: sanitize.Line(selection),
		Count: len(ids), IDs: orEmpty(ids), Missing: orEmpty(missing),
		Read: in.Batch.Count(), Depth: in.Batch.Depth, Truncated: in.Batch.Truncated(), Problems: []string{},
	}
}

// discardPlanJSON is what discard --yes would take out of the queue.
func discardPlanJSON(req triage.DiscardRequest, in triage.Inspection, chosen []triage.Triaged) DiscardPlanJSON {
	ids := make([]string, len(chosen))
	for i, t := range chosen {
		ids[i] = t.ID
	}
	vhost := in.Batch.Vhost
	if vhost == "" {
		vhost = in.Topology.Vhost
	}
	base := basePlan("discard", in, vhost, req.Queue, req.Selection.String(), ids, missingIDs(req.Selection.IDs, chosen))
	return DiscardPlanJSON{PlanJSON: base, Reason: sanitize.Line(req.Reason)}
}

// replayPlanJSON is the dry run of a replay.
func replayPlanJSON(plan replay.Plan, in triage.Inspection) ReplayPlanJSON {
	p := ReplayPlanJSON{PlanJSON: basePlan("replay", in, plan.Vhost, plan.Queue, plan.Selection.String(), plan.IDs(), plan.Missing),
		ReplayID: plan.ID, Allowed: plan.Allowed, Options: plan.Options}
	p.Problems = orEmpty(plan.Problems)
	p.Destinations = make([]replay.Destination, len(plan.Destinations))
	for i, d := range plan.Destinations {
		d.Queues = orEmpty(d.Queues)
		d.Route = triage.Route{Exchange: sanitize.Line(d.Route.Exchange), RoutingKey: sanitize.Line(d.Route.RoutingKey)}
		if h := d.RetryBucket; h != nil { // names from the broker, as the route's
			d.RetryBucket = &triage.RetryHop{Bucket: sanitize.Line(h.Bucket), Feeds: sanitize.Lines(h.Feeds),
				Next: triage.Route{Exchange: sanitize.Line(h.Next.Exchange), RoutingKey: sanitize.Line(h.Next.RoutingKey)}}
		}
		d.FedBy = sanitize.Line(d.FedBy)
		p.Destinations[i] = d
	}
	p.Unroutable = orEmpty(plan.Unroutable)
	p.Revisions = map[string]string{}
	for _, it := range plan.Items.All() {
		if it.Revision != nil {
			p.Revisions[sanitize.Line(it.ID)] = it.Revision.ID
		}
	}
	return p
}

// FullScanPlanJSON is what `dlqt fullscan QUEUE --json` prints without
// --yes: what a full scan would do, read from no broker. With --yes it
// prints the groups instead.
type FullScanPlanJSON struct {
	Action   string   `json:"action"` // "fullscan"
	Vhost    string   `json:"vhost"`
	Queue    string   `json:"queue"`
	Window   int      `json:"window"`  // messages in flight at once
	Effects  []string `json:"effects"` // what it does to the queue
	Problems []string `json:"problems"`
}

func fullScanPlanJSON(vhost, queue string, window int, effects []string) FullScanPlanJSON {
	return FullScanPlanJSON{Action: "fullscan", Vhost: sanitize.Line(vhost), Queue: sanitize.Line(queue),
		Window: window, Effects: orEmpty(effects), Problems: []string{}}
}
