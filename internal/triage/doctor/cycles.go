package doctor

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// The broker keeps a message whose dead-letter trip comes back to a queue it
// already died in only if some death on the way was a rejection (3.10
// rabbit_dead_letter:is_cycle; expired, maxlen and delivery_limit do not
// count). So a cycle where messages only expire or overflow loses them
// without a trace, and one where a consumer rejects never ends by itself.
// Measured on 3.10.8: a classic queue's expired death and a quorum queue's
// delivery_limit death into a loop back to the same queue are dropped at
// once, while a rejected one comes back with its count one higher.

// cycles reports each group of queues whose dead letters can come back to
// where they started (a strongly connected component of the dead-letter
// graph, or a queue dead-lettering into itself), once per group.
func (d *doctor) cycles() []Finding {
	edges := make(map[string][]string, len(d.queues))
	for _, q := range d.queues {
		edges[q.Name] = d.deadLetterEdges(q)
	}
	var out []Finding
	for _, members := range stronglyConnected(d.queues, edges) {
		if len(members) == 1 && !slices.Contains(edges[members[0]], members[0]) {
			continue
		}
		out = append(out, d.cycleFinding(members, edges))
	}
	return out
}

// diesAutomatically says whether the broker itself dead-letters from q
// (message TTL, an overflowing length limit, a delivery limit), as opposed
// to only when a consumer rejects.
func diesAutomatically(q triage.Queue) bool {
	return q.MessageTTL > 0 || overflowDeadLetters(q) || q.DeliveryLimit > 0
}

// overflowDeadLetters: drop-head (the default) and reject-publish-dlx
// dead-letter what overflows; reject-publish refuses the publish instead.
func overflowDeadLetters(q triage.Queue) bool {
	return q.MaxLength > 0 && q.Overflow != "reject-publish"
}

// rejects says whether messages on q can die by rejection: it has consumers,
// or nothing but a consumer could ever dead-letter from it.
func rejects(q triage.Queue) bool {
	return q.Consumers > 0 || !diesAutomatically(q)
}

func (d *doctor) cycleFinding(members []string, edges map[string][]string) Finding {
	var rejecting, delaying []string
	for _, name := range members {
		q := d.queue(name)
		if rejects(q) {
			rejecting = append(rejecting, name)
		}
		if q.MessageTTL > 0 {
			delaying = append(delaying, name)
		}
	}
	start := members[0]
	if len(rejecting) > 0 {
		start = rejecting[0] // the queue whose consumer starts each lap
	}
	path := d.cyclePath(start, members, edges)
	first := d.queue(start)
	f := Finding{Queue: start, Exchange: first.DeadLetterExchange}

	if len(rejecting) == 0 {
		var how []string
		for _, name := range members {
			how = append(how, name+" ("+strings.Join(automaticDeaths(d.queue(name)), ", ")+")")
		}
		f.Kind, f.Severity = KindCycleSilentDrop, SeverityError
		f.Detail = fmt.Sprintf("Dead letters go round a cycle: %s. No consumer reads these queues and they only dead-letter on their own: %s. "+
			"A dead letter headed back to a queue it already died in, with no rejection on the way, is dropped by RabbitMQ: no error, no parking queue, nothing to replay.",
			path, strings.Join(how, "; "))
		f.Fix = fmt.Sprintf("Break the cycle: point the dead-letter exchange of %s at a parking exchange (a fanout with a parking queue bound to it), not back into the cycle. "+
			"For a delayed retry, let the consumer publish to a wait queue and count x-death.", start)
		return f
	}

	f.Kind = KindCycleInfinite
	who := make([]string, len(rejecting))
	for i, name := range rejecting {
		who[i] = name + " (" + consumerWords(d.queue(name)) + ")"
	}
	// A consumer that requeues instead of rejecting runs into the delivery
	// limit, and that death is no rejection: the broker drops the message.
	var limited []string
	for _, name := range members {
		if q := d.queue(name); q.DeliveryLimit > 0 {
			limited = append(limited, fmt.Sprintf("%s (delivery limit %d)", name, q.DeliveryLimit))
		}
	}
	alsoDropped := ""
	if len(limited) > 0 {
		alsoDropped = fmt.Sprintf(" Messages requeued past the delivery limit of %s are not rejected but dropped by the broker, without a trace.", strings.Join(limited, ", "))
	}
	if len(delaying) == 0 {
		// Nothing slows the loop: a poison message spins as fast as it is rejected.
		f.Severity = SeverityError
		f.Detail = fmt.Sprintf("Dead letters go round a cycle with no delay on it: %s. Messages die there by consumer rejection: %s, and RabbitMQ never drops a message whose trip includes a rejection. "+
			"A message the consumer keeps rejecting comes straight back, forever, as fast as it is rejected.%s", path, strings.Join(who, "; "), alsoDropped)
		f.Fix = fmt.Sprintf("Point the dead-letter exchange of %s at a parking exchange with a parking queue instead of back into the cycle. "+
			"To retry, go through a wait queue with a message TTL and stop after N tries by reading the x-death count.", start)
		return f
	}
	// A broker-run retry: the consumer rejects, a wait queue holds the
	// message for its TTL and dead-letters it back. Legitimate only if the
	// consumer stops rejecting after N tries, which dlqt cannot see.
	f.Severity = SeverityWarning
	f.Detail = fmt.Sprintf("Dead letters go round a retry cycle: %s, waiting in %s. Messages die there by consumer rejection: %s, and RabbitMQ never drops a message whose trip includes a rejection. "+
		"A message that always fails comes back every lap, forever, unless the consumer counts its tries.%s", path, strings.Join(delaying, ", "), strings.Join(who, "; "), alsoDropped)
	f.Fix = fmt.Sprintf("Check that the consumer of %s reads the x-death count for %s and, past a limit, publishes the message to a parking queue and acks it instead of rejecting it again. "+
		"Or let the application publish retries itself (to per-delay wait queues) and point the dead-letter exchange of %s at a parking queue.", start, start, start)
	return f
}

// automaticDeaths names the ways the broker dead-letters from q on its own.
func automaticDeaths(q triage.Queue) []string {
	var out []string
	if q.MessageTTL > 0 {
		out = append(out, "message TTL "+ttlWords(q.MessageTTL))
	}
	if overflowDeadLetters(q) {
		out = append(out, fmt.Sprintf("length limit %d, overflow %s", q.MaxLength, overflowName(q)))
	}
	if q.DeliveryLimit > 0 {
		out = append(out, fmt.Sprintf("delivery limit %d", q.DeliveryLimit))
	}
	return out
}

// ttlWords shows a TTL as the broker has it and as a person reads it:
// "86400000 ms (24h0m0s)".
func ttlWords(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d < time.Second {
		return fmt.Sprintf("%d ms", ms)
	}
	return fmt.Sprintf("%d ms (%s)", ms, d)
}

func overflowName(q triage.Queue) string {
	if q.Overflow == "" {
		return "drop-head"
	}
	return q.Overflow
}

func consumerWords(q triage.Queue) string {
	switch {
	case q.Consumers == 1:
		return "1 consumer"
	case q.Consumers > 1:
		return fmt.Sprintf("%d consumers", q.Consumers)
	}
	return "no consumer yet, and only a consumer's rejection dead-letters from it"
}

// cyclePath writes the shortest way from start back to start inside the
// group, with the dead-letter exchange of each step:
// "a -> exchange x -> b -> exchange y -> a".
func (d *doctor) cyclePath(start string, members []string, edges map[string][]string) string {
	in := map[string]bool{}
	for _, m := range members {
		in[m] = true
	}
	prev := map[string]string{}
	queue := []string{start}
	seen := map[string]bool{}
	found := false
	for len(queue) > 0 && !found {
		cur := queue[0]
		queue = queue[1:]
		for _, next := range edges[cur] {
			if !in[next] {
				continue
			}
			if next == start {
				prev[start], found = cur, true
				break
			}
			if !seen[next] {
				seen[next], prev[next] = true, cur
				queue = append(queue, next)
			}
		}
	}
	steps := []string{start}
	for cur := prev[start]; cur != start; cur = prev[cur] {
		steps = append(steps, cur)
	}
	steps = append(steps, start)
	slices.Reverse(steps)
	var b strings.Builder
	for i, s := range steps {
		if i > 0 {
			fmt.Fprintf(&b, " -> %s -> ", exchangeName(d.queue(steps[i-1]).DeadLetterExchange))
		}
		b.WriteString(s)
	}
	return b.String()
}

// stronglyConnected returns the strongly connected components of the
// dead-letter graph (Tarjan), each sorted, in a stable order.
func stronglyConnected(queues []triage.Queue, edges map[string][]string) [][]string {
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v] = len(index)
		low[v] = index[v]
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range edges[v] {
			if _, ok := index[w]; !ok {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var comp []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		slices.Sort(comp)
		out = append(out, comp)
	}
	for _, q := range queues {
		if _, ok := index[q.Name]; !ok {
			visit(q.Name)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}
