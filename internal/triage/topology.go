package triage

import (
	"slices"
	"sort"
	"strings"
)

// FindParkingQueues lists the parking queues of a topology: every queue that
// receives dead letters from a queue that is not a retry bucket, plus queues
// whose names match a pattern (nil patterns: DefaultParkingPatterns). Retry
// buckets and the work queues they feed are never parking queues. Queue
// names are returned raw (they are keys for the broker); views sanitise them.
func FindParkingQueues(t Topology, patterns []string) []ParkingQueue {
	if patterns == nil {
		patterns = DefaultParkingPatterns
	}
	r := newRouter(t)

	targets := make(map[string][]string, len(t.Queues))
	for _, q := range t.Queues {
		targets[q.Name] = r.deadLetterTargets(q)
	}
	retrying := map[string]bool{} // buckets and the work queues they feed
	buckets := map[string]bool{}
	for _, q := range t.Queues {
		if fed := r.retryTargets(q, targets); len(fed) > 0 {
			buckets[q.Name] = true
			retrying[q.Name] = true
			for _, w := range fed {
				retrying[w] = true
			}
		}
	}

	from := map[string][]string{} // parking queue -> non-bucket queues dead-lettering into it
	for _, q := range t.Queues {
		if buckets[q.Name] {
			continue
		}
		for _, dst := range targets[q.Name] {
			if dst != q.Name { // a queue dead-lettering into itself is a loop, not parking
				from[dst] = append(from[dst], q.Name)
			}
		}
	}

	var out []ParkingQueue
	for _, q := range t.Queues {
		if retrying[q.Name] {
			continue
		}
		sources, fed := from[q.Name]
		rule := ""
		if fed {
			sources = uniqueSorted(sources)
			rule = "dead-lettered from " + strings.Join(sources, ", ")
		} else if rule = parkingRuleByName(q.Name, patterns); rule == "" {
			continue
		}
		out = append(out, ParkingQueue{Queue: q, Vhost: t.Vhost, DeadLetteredFrom: uniqueSorted(sources), ByName: !fed, Rule: rule})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// retryTargets returns the work queues a retry bucket feeds, or nothing when
// q is not a bucket. A bucket holds messages for a TTL, then its DLX sends
// them back to work (orders.retry.2s.q -> orders.exchange ->
// orders.main.q). A work queue is consumed or dead-letters its own failures
// (it has consumers or a DLX), and no queue without a TTL dead-letters into
// it: such a queue is a parking queue, as in the graveyard demo, where viec2 (TTL)
// and viec (none) both dead-letter into nghia-dia. When in doubt the target
// stays a parking queue: hiding one is worse than listing one too many.
func (r *router) retryTargets(q Queue, targets map[string][]string) []string {
	if q.MessageTTL <= 0 || !q.HasDeadLetterExchange {
		return nil
	}
	var work []string
	for _, name := range targets[q.Name] {
		w, ok := r.queues[name]
		if !ok || name == q.Name || (w.Consumers == 0 && !w.HasDeadLetterExchange) || r.parkedByPlainQueue(name, targets) {
			continue
		}
		work = append(work, name)
	}
	return work
}

// parkedByPlainQueue says whether a queue without a TTL dead-letters into name.
func (r *router) parkedByPlainQueue(name string, targets map[string][]string) bool {
	for src, dsts := range targets {
		if src != name && r.queues[src].MessageTTL <= 0 && slices.Contains(dsts, name) {
			return true
		}
	}
	return false
}

// uniqueSorted sorts and deduplicates; it returns an empty, non-nil slice so
// that JSON shows [] rather than null.
func uniqueSorted(s []string) []string {
	out := make([]string, 0, len(s))
	sort.Strings(s)
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
