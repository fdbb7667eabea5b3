package doctor

import (
	"fmt"
	"strings"

	"github.com/dlqt/dlqt/internal/triage"
)

// deadLetterRoutes checks where each queue's dead letters go: to an
// exchange that exists, and from there to at least one queue. A dead letter
// that reaches no queue dies a second time, and that time nothing keeps it.
func (d *doctor) deadLetterRoutes() []Finding {
	var out []Finding
	for _, q := range d.queues {
		if !deadLetters(q) {
			continue
		}
		x := q.DeadLetterExchange
		if !d.exists(x) {
			out = append(out, Finding{
				Kind: KindMissingExchange, Severity: SeverityError, Queue: q.Name, Exchange: x,
				Detail: fmt.Sprintf("Queue %s dead-letters into exchange %s (%s), which does not exist in vhost %s: every message that dies in %s is dropped.",
					q.Name, x, dlxSource(q), d.t.Vhost, q.Name),
				Fix: fmt.Sprintf("Declare exchange %s (a fanout is safest) and bind a parking queue to it, or point the dead-letter exchange of %s at an exchange that exists.", x, q.Name),
			})
			continue
		}
		lost, kept := d.lostKeys(q)
		if len(lost) == 0 {
			continue
		}
		if work := d.workQueuesBehind(q); len(work) > 0 {
			out = append(out, d.retryMismatch(q, lost, work))
			continue
		}
		out = append(out, d.unroutable(q, lost, kept))
	}
	return out
}

// lostKeys splits the keys q's dead letters carry into those its DLX routes
// to no queue (lost) and those it routes (kept). An unknown key is lost only
// when the DLX routes nothing at all.
func (d *doctor) lostKeys(q triage.Queue) (lost, kept []string) {
	ks := d.deadLetterKeys(q)
	x := q.DeadLetterExchange
	for _, key := range ks.Exact {
		if len(d.reachKey(x, key, true)) == 0 {
			lost = append(lost, fmt.Sprintf("%q", key))
		} else {
			kept = append(kept, fmt.Sprintf("%q", key))
		}
	}
	if ks.Any && x != "" && len(d.reachKey(x, "", false)) == 0 {
		lost = append(lost, "any key")
	}
	return lost, kept
}

// workQueuesBehind returns the work queues a retry bucket's DLX feeds, or
// nothing when q is not a bucket. A bucket is a queue nobody consumes that
// holds messages for a TTL and dead-letters them to an exchange that has a
// work queue (consumed, or dead-lettering its own failures) bound to it.
func (d *doctor) workQueuesBehind(q triage.Queue) []string {
	if q.MessageTTL <= 0 || q.Consumers > 0 || q.DeadLetterExchange == "" {
		return nil
	}
	var work []string
	for _, name := range d.reachKey(q.DeadLetterExchange, "", false) {
		w := d.queue(name)
		if name != q.Name && (w.Consumers > 0 || w.HasDeadLetterExchange) {
			work = append(work, name)
		}
	}
	return work
}

func (d *doctor) retryMismatch(q triage.Queue, lost, work []string) Finding {
	x := q.DeadLetterExchange
	var bound []string
	for _, w := range work {
		for _, b := range d.bindings[w] {
			if b.Source == x {
				bound = append(bound, fmt.Sprintf("%s with key %q", w, b.RoutingKey))
			}
		}
	}
	if len(bound) == 0 { // bound through another exchange
		bound = work
	}
	return Finding{
		Kind: KindRetryRouteMismatch, Severity: SeverityError, Queue: q.Name, Exchange: x,
		Detail: fmt.Sprintf("Retry queue %s holds messages for %s, then dead-letters them to exchange %s with routing key %s (%s), but no binding of %s matches: "+
			"retried messages never reach the work queue (bound: %s) and are dropped when they expire.",
			q.Name, ttlWords(q.MessageTTL), x, strings.Join(lost, ", "), keyOrigin(q), x, strings.Join(bound, "; ")),
		Fix: fmt.Sprintf("Set the dead-letter routing key of %s to the key the work queue is bound with, or bind the work queue to %s with %s.",
			q.Name, x, strings.Join(lost, ", ")),
	}
}

func (d *doctor) unroutable(q triage.Queue, lost, kept []string) Finding {
	x := q.DeadLetterExchange
	which := "nothing bound to it matches"
	if len(kept) > 0 {
		which = fmt.Sprintf("nothing bound to it matches them (only %s route)", strings.Join(kept, ", "))
	}
	kind := d.exchangeType(x)
	if kind == "" {
		kind = "direct"
	}
	if ae := d.alternates[x]; ae != "" {
		which += fmt.Sprintf(", nor in its alternate exchange %s", ae)
	}
	return Finding{
		Kind: KindUnroutable, Severity: SeverityError, Queue: q.Name, Exchange: x,
		Detail: fmt.Sprintf("Queue %s dead-letters into %s (%s, %s) with routing key %s (%s), and %s: those dead letters die a second time and are dropped.",
			q.Name, exchangeName(x), kind, dlxSource(q), strings.Join(lost, ", "), keyOrigin(q), which),
		Fix: fmt.Sprintf("Bind a parking queue to %s so those keys land (a fanout dead-letter exchange takes any key), or set the dead-letter routing key of %s to a key that is bound.",
			exchangeName(x), q.Name),
	}
}

// dlxSource says where a queue's effective DLX comes from.
func dlxSource(q triage.Queue) string {
	if q.DLXFromPolicy {
		if q.Policy != "" {
			return "set by policy " + q.Policy
		}
		return "set by policy"
	}
	return "set by queue argument"
}

func keyOrigin(q triage.Queue) string {
	if q.HasDeadLetterRoutingKey {
		return "its dead-letter routing key"
	}
	return "the keys its messages arrive with; it sets no dead-letter routing key"
}
