package triage

import "slices"

// ClassifyReason tells a broker death into queue m.Queue from an application
// publish (docs/ARCHITECTURE.md, "Why is it here?"). The broker put the message here when
// x-death[0].queue dead-letters, through its effective DLX, into an exchange
// that routes to m.Queue: the reason is then that death's. Otherwise an
// application published it here (app-run retries: the last death is an `expired` in
// a retry bucket whose DLX feeds the work queue, not this one).
func ClassifyReason(m Message, deaths []Death, top Topology) Reason {
	if len(deaths) > 0 && deaths[0].Reason != "" && newRouter(top).brokerDeath(m, deaths[0]) {
		return deaths[0].Reason
	}
	return ReasonPublished
}

// brokerDeath says whether the broker dead-lettered the message into m.Queue
// with death last (x-death[0]), rather than an application publishing it.
func (r *router) brokerDeath(m Message, last Death) bool {
	if q, ok := r.queues[last.Queue]; ok {
		return r.deadLettersInto(q, last, m)
	}
	return r.deliveredAsDeadLetter(m, last)
}

// deadLettersInto says whether q's dead letters, carrying death d, reach m.Queue.
func (r *router) deadLettersInto(q Queue, d Death, m Message) bool {
	if !q.HasDeadLetterExchange {
		return false
	}
	keys := d.RoutingKeys
	if q.HasDeadLetterRoutingKey {
		keys = []string{q.DeadLetterRoutingKey}
	} else if len(keys) == 0 {
		// x-death without routing-keys (a client-written or damaged one): a
		// dead letter keeps its key, so the delivery's key is the best guess.
		keys = []string{m.RoutingKey}
	}
	for _, k := range keys {
		if slices.Contains(r.routes(q.DeadLetterExchange, k, m.Headers), m.Queue) {
			return true
		}
	}
	return false
}

// deliveredAsDeadLetter decides when x-death[0].queue is not in the topology
// (deleted since, or an old snapshot), from the delivery itself. A dead
// letter is published by the broker to the DLX with the dead-letter routing
// key or the message's original keys, which x-death records. So it is a
// broker death only when the exchange it was delivered through is some
// known queue's effective DLX and its routing key is one a dead-lettering
// would use: one of the death's routing keys, or the dead-letter routing key
// of a queue with that DLX. Without that evidence the message was published.
func (r *router) deliveredAsDeadLetter(m Message, d Death) bool {
	keys, isDLX := r.deadLetterKeys[m.Exchange]
	if !isDLX {
		return false
	}
	return keys[m.RoutingKey] || slices.Contains(d.RoutingKeys, m.RoutingKey)
}

// maxReasonCode bounds a reason code: it is a grouping key, not a message.
const maxReasonCode = 128

// Framework fault headers whose value is an exception type, usable as a code.
const (
	springStacktrace = "x-exception-stacktrace"                  // Spring AMQP RepublishMessageRecoverer
	massTransitType  = "MT-Fault-ExceptionType"                  // MassTransit
	nServiceBusType  = "NServiceBus.ExceptionInfo.ExceptionType" // NServiceBus
)

// ReasonCodeOf finds the application's stable reason code: the envelope's
// failure.reason_code, else header x-reason-code or reason_code. Without
// one, the failure's fingerprint stands for it (Fault.Key): the root-cause
// exception of the Spring AMQP, MassTransit, NServiceBus, Celery or plain
// x-exception/x-error headers and where it was thrown, never the free
// exception text as it is (it differs per message and would split every
// group). "" when the message says neither.
func ReasonCodeOf(m Message, env Envelope) string {
	code, _, _ := reasonCode(m, env, FrameRules{})
	return code
}

// reasonCode is ReasonCodeOf with the operator's app frames, and the fault
// when the code is its fingerprint.
func reasonCode(m Message, env Envelope, rules FrameRules) (string, Fault, bool) {
	if c := appReasonCode(m, env); c != "" {
		return c, Fault{}, false
	}
	f, ok := FaultOf(m.Headers, rules)
	if !ok {
		return "", Fault{}, false
	}
	if c := codeText(f.Key()); c != "" {
		return c, f, true
	}
	return "", Fault{}, false
}

// appReasonCode is the code the application itself set, or "".
func appReasonCode(m Message, env Envelope) string {
	if env.Failure != nil {
		if c := codeText(env.Failure.ReasonCode); c != "" {
			return c
		}
	}
	for _, key := range []string{"x-reason-code", "reason_code"} {
		if c := codeText(headerString(m.Headers, key)); c != "" {
			return c
		}
	}
	return ""
}

// headerString is a header's raw text ("" when absent or not text).
func headerString(h Headers, key string) string {
	v, ok := findHeader(h, key)
	if !ok {
		return ""
	}
	s, _ := textOf(v)
	return s
}

func codeText(s string) string { return oneLine(s, maxReasonCode) }
