package triage

import (
	"slices"
	"strings"
)

// RetryHop is a retry bucket a route reaches and where the bucket sends
// its messages on: replaying "to the original route" of a message whose
// first death was in a bucket only works because of this hop.
type RetryHop struct {
	Bucket string   `json:"bucket"`
	Next   Route    `json:"next"`  // the bucket's dead-letter route
	Feeds  []string `json:"feeds"` // the work queues Next reaches
}

// String says the hop, e.g. "retry bucket orders.retry.1 → orders.q"; raw
// names, for the caller to sanitise.
func (h RetryHop) String() string {
	return "retry bucket " + h.Bucket + " → " + strings.Join(h.Feeds, ", ")
}

// RetryBucketOf says whether route (with the message's headers and
// deaths) lands in a retry bucket rather than a work queue: one queue, no
// consumer, a dead-letter exchange that sends it on to other queues than
// itself and the parking queue, and a TTL (the queue's, or a per-message
// one the message is seen expiring by there). A consumed queue is a work
// queue even with a TTL.
func (t Topology) RetryBucketOf(route Route, h Headers, deaths []Death, parking string) (RetryHop, bool) {
	return NewRouter(t).RetryBucketOf(route, h, deaths, parking)
}

// MayRetryThrough says whether RetryBucketOf might find a retry bucket on
// route for some message: whether any queue the route may reach, whatever
// the headers, could be one (no consumer, a dead-letter exchange). When it
// says no, a plan need not read a message's headers to ask.
func (rt *Router) MayRetryThrough(route Route) bool {
	for _, name := range rt.r.reach(route.Exchange, route.RoutingKey, nil, matchAnyHeaders) {
		if b, ok := rt.r.queues[name]; ok && b.Consumers == 0 && b.HasDeadLetterExchange {
			return true
		}
	}
	return false
}

// RetryBucketOf is Topology.RetryBucketOf on an indexed topology: a plan
// asks it for many messages.
func (rt *Router) RetryBucketOf(route Route, h Headers, deaths []Death, parking string) (RetryHop, bool) {
	r := rt.r
	reached := r.routes(route.Exchange, route.RoutingKey, h)
	if len(reached) != 1 {
		return RetryHop{}, false
	}
	b, ok := r.queues[reached[0]]
	if !ok || b.Consumers > 0 || !b.HasDeadLetterExchange {
		return RetryHop{}, false
	}
	expiredThere := slices.ContainsFunc(deaths, func(d Death) bool { return d.Queue == b.Name && d.Reason == ReasonExpired })
	if b.MessageTTL <= 0 && !expiredThere {
		return RetryHop{}, false
	}
	next := Route{Exchange: b.DeadLetterExchange, RoutingKey: route.RoutingKey}
	if b.HasDeadLetterRoutingKey {
		next.RoutingKey = b.DeadLetterRoutingKey
	} else if i := slices.IndexFunc(deaths, func(d Death) bool { return d.Queue == b.Name && len(d.RoutingKeys) > 0 }); i >= 0 {
		next.RoutingKey = deaths[i].RoutingKeys[0] // the key it was dead-lettered with there
	}
	feeds := slices.DeleteFunc(slices.Clone(r.routes(next.Exchange, next.RoutingKey, h)), func(q string) bool { return q == b.Name || q == parking })
	if len(feeds) == 0 {
		return RetryHop{}, false
	}
	return RetryHop{Bucket: b.Name, Next: next, Feeds: feeds}, true
}
