package doctor

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/dlqt/dlqt/internal/triage"
)

// lengthLimits finds queues that delete their oldest messages when full,
// with nowhere to dead-letter them: data lost without a trace.
// Parking queues are left to parkingFindings, which names every way they
// lose messages in one finding.
func (d *doctor) lengthLimits(parking []triage.ParkingQueue) []Finding {
	isParking := map[string]bool{}
	for _, p := range parking {
		isParking[p.Name] = true
	}
	var out []Finding
	for _, q := range d.queues {
		if q.MaxLength <= 0 || q.Type == triage.QueueStream || deadLetters(q) || isParking[q.Name] {
			continue
		}
		if q.Overflow != "" && q.Overflow != "drop-head" {
			continue // reject-publish refuses new messages, which a publisher with confirms sees
		}
		out = append(out, Finding{
			Kind: KindMaxlenWithoutDLX, Severity: SeverityWarning, Queue: q.Name,
			Detail: fmt.Sprintf("Queue %s keeps at most %d messages, overflow drop-head, and has no dead-letter exchange: when it is full, its oldest message is deleted to make room, silently.",
				q.Name, q.MaxLength),
			Fix: fmt.Sprintf("Give %s a dead-letter exchange (by policy) that routes to a parking queue, so overflowed messages are kept; or set overflow to reject-publish so publishers using confirms see the refusal.", q.Name),
		})
	}
	return out
}

// parkingFindings checks that each parking queue keeps what lands in it
// until a person decides: nothing consumes it, nothing expires or evicts it.
func parkingFindings(parking []triage.ParkingQueue, b triage.Broker) []Finding {
	var out []Finding
	for _, p := range parking {
		if p.Type == triage.QueueStream {
			continue // a stream keeps what its consumers read, by offset
		}
		if p.Consumers > 0 {
			out = append(out, Finding{
				Kind: KindParkingConsumers, Severity: SeverityWarning, Queue: p.Name,
				Detail: fmt.Sprintf("Parking queue %s has %s%s: whatever lands there is taken automatically before a person sees it. "+
					"A consumer that republishes to the work queue is a reject loop written by hand; one that acks makes dead letters vanish. "+
					"(A dlqt browse in progress also shows as a consumer for its few seconds.)%s",
					p.Name, consumerWords(p.Queue), fromWords(p), byNameWords(p)),
				Fix: fmt.Sprintf("Find the consumer (management UI, queue %s, Consumers; or rabbitmqctl list_consumers -p %s) and stop it; triage %s by hand with dlqt.",
					p.Name, p.Vhost, p.Name),
			})
		}
		cost := triage.DeliveryCostOf(p.Queue, b)
		if hazards := parkingHazards(p.Queue, cost); len(hazards) > 0 {
			out = append(out, Finding{
				Kind: KindParkingLoses, Severity: SeverityWarning, Queue: p.Name, Exchange: p.DeadLetterExchange,
				Detail: fmt.Sprintf("Parking queue %s can lose messages before anyone decides on them: %s.%s", p.Name, strings.Join(hazards, "; "), byNameWords(p)),
				Fix: fmt.Sprintf("Remove the %s from %s (in its policy, or redeclare it without the argument): a parking queue should keep everything.%s "+
					"Until then, browse it sparingly and replay or discard from it soon.", limitNames(p.Queue, cost), p.Name, defaultLimitFix(p, cost)),
			})
		}
	}
	return out
}

// limitNames names the settings behind parkingHazards, for the fix.
func limitNames(q triage.Queue, cost triage.DeliveryCost) string {
	var names []string
	if q.MessageTTL > 0 {
		names = append(names, "message TTL")
	}
	if q.MaxLength > 0 {
		names = append(names, "length limit")
	}
	if cost.Limited {
		names = append(names, "delivery limit")
	}
	if len(names) > 1 {
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	return strings.Join(names, "")
}

// defaultLimitFix says how to lift a limit the queue never set: RabbitMQ
// 4.0 gives every quorum queue one, and only a negative limit disables it.
func defaultLimitFix(p triage.ParkingQueue, cost triage.DeliveryCost) string {
	if !cost.Default {
		return ""
	}
	def, _ := json.Marshal(map[string]int{"delivery-limit": -1})
	return fmt.Sprintf(" Its delivery limit is RabbitMQ's default (4.0 and later), which only a negative limit lifts: rabbitmqctl set_policy -p %s NAME '^%s$' '%s' --apply-to quorum_queues (merge it into the policy that applies to %s, if one does).",
		p.Vhost, regexp.QuoteMeta(p.Name), def, p.Name)
}

// parkingHazards lists how q lets go of messages on its own.
func parkingHazards(q triage.Queue, cost triage.DeliveryCost) []string {
	where := "dropped (it has no dead-letter exchange)"
	if deadLetters(q) {
		where = "dead-lettered on to " + exchangeName(q.DeadLetterExchange)
	}
	var out []string
	if q.MessageTTL > 0 {
		out = append(out, fmt.Sprintf("message TTL %s: a message left there that long is %s", ttlWords(q.MessageTTL), where))
	}
	if q.MaxLength > 0 {
		if q.Overflow == "reject-publish" || q.Overflow == "reject-publish-dlx" {
			out = append(out, fmt.Sprintf("length limit %d, overflow %s: once full, new dead letters are refused and lost", q.MaxLength, q.Overflow))
		} else {
			out = append(out, fmt.Sprintf("length limit %d, overflow drop-head: each new dead letter past it pushes the oldest out, which is %s", q.MaxLength, where))
		}
	}
	if cost.Limited {
		out = append(out, deliveryLimitHazard(cost, where))
	}
	return out
}

// byNameWords owns up to a guess: a queue no DLX feeds is a parking queue
// only because of its name.
func byNameWords(p triage.ParkingQueue) string {
	if !p.ByName {
		return ""
	}
	return " dlqt takes it for a parking queue by its name alone (" + p.Rule + "; no dead-letter exchange routes to it); if it is a work queue, ignore this or set parking_patterns in the config."
}

// byNameFindings say which name rule made each queue no dead-letter
// exchange feeds a parking queue: the frameworks that park failures
// themselves (NServiceBus's error queue, MassTransit's _error queues,
// Spring's republishing recoverer) publish there, and a responder should
// know the list holds it on a guess. A queue with a finding already has
// the rule in it (byNameWords).
func byNameFindings(parking []triage.ParkingQueue, found []Finding) []Finding {
	said := map[string]bool{}
	for _, f := range found {
		said[f.Queue] = true
	}
	var out []Finding
	for _, p := range parking {
		if !p.ByName || said[p.Name] {
			continue
		}
		out = append(out, Finding{
			Kind: KindParkingByName, Severity: SeverityAdvisory, Queue: p.Name,
			Detail: fmt.Sprintf("Queue %s is listed as a parking queue by its name (%s): no dead-letter exchange routes to it, so what it holds was published there, as frameworks that park their own failures do.",
				p.Name, p.Rule),
			Fix: "Nothing to change if it holds failures. If it is a work queue, set parking_patterns in the config to patterns that leave it out.",
		})
	}
	return out
}

func fromWords(p triage.ParkingQueue) string {
	if len(p.DeadLetteredFrom) == 0 {
		return ""
	}
	return " and receives the dead letters of " + strings.Join(p.DeadLetteredFrom, ", ")
}

// argumentDLXs notes DLXs set by queue argument: an argument cannot be
// changed on a live queue and overrides any policy, so correcting it later
// means deleting and redeclaring the queue.
func (d *doctor) argumentDLXs() []Finding {
	var out []Finding
	for _, q := range d.queues {
		if !deadLetters(q) || q.DLXFromPolicy {
			continue
		}
		def, _ := json.Marshal(map[string]string{"dead-letter-exchange": q.DeadLetterExchange})
		out = append(out, Finding{
			Kind: KindDLXByArgument, Severity: SeverityAdvisory, Queue: q.Name, Exchange: q.DeadLetterExchange,
			Detail: fmt.Sprintf("Queue %s sets its dead-letter exchange (%s) by queue argument. Arguments cannot be changed on a live queue and win over any policy: "+
				"changing where its dead letters go means deleting and redeclaring %s.", q.Name, exchangeName(q.DeadLetterExchange), q.Name),
			Fix: fmt.Sprintf("Next time %s is declared, leave out x-dead-letter-exchange (and x-dead-letter-routing-key) and set them by policy, e.g. rabbitmqctl set_policy -p %s NAME '^%s$' '%s' --apply-to queues.",
				q.Name, d.t.Vhost, regexp.QuoteMeta(q.Name), def),
		})
	}
	return out
}

// deliveryLimitHazard says what counts toward the limit on this broker.
func deliveryLimitHazard(cost triage.DeliveryCost, where string) string {
	limit := fmt.Sprintf("quorum delivery limit %d", cost.Limit)
	if cost.Default {
		limit = fmt.Sprintf("quorum delivery limit %d, RabbitMQ's default from 4.0 on (the queue sets none)", cost.Limit)
	}
	counts := "every browse or requeue counts as a delivery"
	if !cost.RequeueCounts {
		counts = "a requeue is free on this broker, but a reject, a closed channel or a crashed consumer (a browser included) counts as a delivery"
	}
	return fmt.Sprintf("%s: %s, so a message returned more than %d times is %s", limit, counts, cost.Limit, where)
}
