package doctor

import (
	"slices"
	"strings"

	"github.com/dlqt/dlqt/internal/triage"
)

// keySet is the routing keys messages of a queue can carry: exact keys, and
// Any when some arrive with a key the topology cannot tell (through a
// fanout, headers or wildcard topic binding).
type keySet struct {
	Exact []string // sorted, unique
	Any   bool
}

func (k *keySet) add(key string) bool {
	i, found := slices.BinarySearch(k.Exact, key)
	if found {
		return false
	}
	k.Exact = slices.Insert(k.Exact, i, key)
	return true
}

// merge adds o to k and says whether k grew.
func (k *keySet) merge(o keySet) bool {
	grew := false
	for _, key := range o.Exact {
		grew = k.add(key) || grew
	}
	if o.Any && !k.Any {
		k.Any, grew = true, true
	}
	return grew
}

// bindingKeys are the keys publishers' messages reach q with: the key of
// each direct (or wildcard-free topic) binding, and its own name when it has
// no binding, since then only the default exchange routes to it.
func (d *doctor) bindingKeys(q triage.Queue) keySet {
	var ks keySet
	bs := d.bindings[q.Name]
	if len(bs) == 0 {
		ks.add(q.Name)
		return ks
	}
	for _, b := range bs {
		switch d.exchangeType(b.Source) {
		case "direct":
			ks.add(b.RoutingKey)
		case "topic":
			if strings.ContainsAny(b.RoutingKey, "*#") {
				ks.Any = true
			} else {
				ks.add(b.RoutingKey)
			}
		default:
			ks.Any = true
		}
	}
	return ks
}

// deadLetterKeys are the keys q's dead letters carry: its dead-letter
// routing key when it has one, else the keys they arrived with.
func (d *doctor) deadLetterKeys(q triage.Queue) keySet {
	if q.HasDeadLetterRoutingKey {
		return keySet{Exact: []string{q.DeadLetterRoutingKey}}
	}
	ks := d.arrivals[q.Name]
	return keySet{Exact: slices.Clone(ks.Exact), Any: ks.Any}
}

// reachKey lists the queues exchange routes key to (headers unknown); an
// unknown key (known false) may match any binding. The default exchange
// routes an unknown key nowhere we can name. What an exchange routes
// nowhere goes to its alternate exchange, dead letters included.
func (d *doctor) reachKey(exchange, key string, known bool) []string {
	q := reachQuery{exchange, key, known}
	if found, ok := d.reached[q]; ok {
		return found
	}
	found := d.reachUncached(exchange, key, known)
	d.reached[q] = found
	return found
}

// reachQuery is one question to reachKey: every check asks the same ones,
// and a topic exchange with thousands of bindings answers each slowly.
type reachQuery struct {
	exchange, key string
	known         bool
}

func (d *doctor) reachUncached(exchange, key string, known bool) []string {
	seen := map[string]bool{}
	for {
		var found []string
		switch {
		case known:
			found = d.r.ReachKey(exchange, key)
		case exchange != "":
			found = d.r.ReachAnyKey(exchange)
		}
		seen[exchange] = true
		next := d.alternates[exchange]
		if len(found) > 0 || next == "" || seen[next] {
			return found
		}
		exchange = next
	}
}

// settleArrivals adds to each queue's arrival keys the keys dead letters
// bring it from other queues (a dead-letter routing key replaces the key),
// until nothing changes. Keys are finite, so this ends.
func (d *doctor) settleArrivals() {
	for changed := true; changed; {
		changed = false
		for _, q := range d.queues {
			if !deadLetters(q) {
				continue
			}
			ks := d.deadLetterKeys(q)
			for _, key := range ks.Exact {
				for _, p := range d.reachKey(q.DeadLetterExchange, key, true) {
					a := d.arrivals[p]
					if a.add(key) {
						d.arrivals[p], changed = a, true
					}
				}
			}
			if ks.Any {
				for _, p := range d.reachKey(q.DeadLetterExchange, "", false) {
					a := d.arrivals[p]
					if a.merge(keySet{Any: true}) {
						d.arrivals[p], changed = a, true
					}
				}
			}
		}
	}
}

// deadLetterEdges are the queues q's dead letters reach, each with the keys
// that take them there.
func (d *doctor) deadLetterEdges(q triage.Queue) []string {
	if !deadLetters(q) {
		return nil
	}
	ks := d.deadLetterKeys(q)
	var out []string
	for _, key := range ks.Exact {
		out = append(out, d.reachKey(q.DeadLetterExchange, key, true)...)
	}
	if ks.Any {
		out = append(out, d.reachKey(q.DeadLetterExchange, "", false)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
