package triage

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// dlqt's own replay headers: a replay keeps the message_id and carries its
// history here, because brokers >= 3.13 ignore a client-set x-death.
const (
	hdrReplayID   = "dlqt-replay-id"
	hdrReplayedAt = "dlqt-replayed-at"
	hdrAttempts   = "dlqt-attempts"
)

// maxDetail bounds free text in a timeline (an x-last-error can be a stack trace).
const maxDetail = 240

// BuildTimeline orders every attempt the message carries evidence of: each
// x-death entry, the first/last death headers, the publish time, the
// envelope's failure block, application and framework retry headers, the
// quorum delivery count and dlqt's replay headers. Sorted by time (stable;
// at the same time a publish comes first and a replay last); undated events
// come after dated ones, in the order above. The order of
// x-death entries is never trusted (RabbitMQ <= 3.12 reorders all but [0]),
// only their times are; and each entry's time is the FIRST death of its
// {queue, reason}, so a count above one is said in the detail. Every string
// of an event is shown as it is returned, so each goes through red here
// (shownEvents); the second result counts the values it masked.
func BuildTimeline(m Message, env Envelope, deaths []Death, red *redact.Redactor) ([]Event, int) {
	h := m.Headers
	var ev []Event
	add := func(es ...Event) { ev = append(ev, es...) }

	// Deaths at the same second (common: retries a few hundred ms apart) keep
	// the order they are added in through the stable sort below. Only
	// x-death[0] is known to be the newest (RabbitMQ <= 3.12 reorders the
	// rest), so it goes last and the others, whose order is unknown, go in
	// queue-name order: deterministic, and retry.1, retry.2, retry.3 read
	// the way such buckets are named.
	if len(deaths) > 0 {
		older := slices.Clone(deaths[1:])
		slices.SortStableFunc(older, func(a, b Death) int { return strings.Compare(a.Queue, b.Queue) })
		for _, d := range append(older, deaths[0]) {
			add(Event{Time: d.Time, Kind: EventDeath, Queue: cleanName(d.Queue), Reason: cleanName(string(d.Reason)), Count: d.Count, Detail: deathDetail(d)})
		}
	}
	add(replayedDeaths(h, deaths)...) // replayed.go: history a broker reset dropped
	if q, r := headerText(h, "x-first-death-queue"), headerText(h, "x-first-death-reason"); q != "" || r != "" {
		// The first death ever is the first of its {queue, reason} entry.
		t, _ := deathTime(deaths, q, r, false)
		add(Event{Time: t, Kind: EventFirstDeath, Queue: clipText(q, maxName), Reason: clipText(r, maxName), Detail: exchangeDetail(headerText(h, "x-first-death-exchange"))})
	}
	if q, r := headerText(h, "x-last-death-queue"), headerText(h, "x-last-death-reason"); q != "" || r != "" {
		// An entry's time is its first death: it dates the last one only when count is 1.
		t, _ := deathTime(deaths, q, r, true)
		add(Event{Time: t, Kind: EventLastDeath, Queue: clipText(q, maxName), Reason: clipText(r, maxName), Detail: exchangeDetail(headerText(h, "x-last-death-exchange"))})
	}

	if ts, ok := believable(m.Properties.Timestamp); ok {
		add(Event{Time: ts, Kind: EventPublished, Detail: "timestamp property"})
	}
	if env.OccurredAt != "" {
		t, _ := parseTime(env.OccurredAt)
		add(Event{Time: t, Kind: EventPublished, Detail: "envelope occurred_at " + clipText(env.OccurredAt, maxName)})
	}
	if f := env.Failure; f != nil {
		add(failureEvents(f)...)
	}
	ev = append(ev, retryEvents(h)...)
	ev = append(ev, frameworkEvents(h)...)

	if n, ok := headerInt(h, "x-delivery-count"); ok {
		add(Event{Kind: EventDelivery, Count: n, Detail: "x-delivery-count (quorum queue redeliveries)"})
	}
	if id, at := headerText(h, hdrReplayID), headerValue(h, hdrReplayedAt); id != "" || at != nil {
		t, _ := timeOf(at)
		e := Event{Time: t, Kind: EventReplay, Detail: "replayed by dlqt"}
		if id != "" {
			e.Detail += ", replay id " + clipText(id, maxName)
		}
		if n, ok := headerInt(h, hdrAttempts); ok {
			e.Count = n
		}
		add(e)
	}

	sort.SliceStable(ev, func(i, j int) bool {
		a, b := ev[i].Time, ev[j].Time
		if a.IsZero() || b.IsZero() {
			return !a.IsZero() && b.IsZero()
		}
		if a.Equal(b) { // times are often whole seconds: a publish comes first, a replay last
			return kindRank(ev[i].Kind) < kindRank(ev[j].Kind)
		}
		return a.Before(b)
	})
	return ev, shownEvents(ev, red)
}

// shownEvents redacts and clips every string of the events in place and
// counts what it masked. The details are built whole and clipped only here,
// after redaction (see redactLookahead): a retry header's free text is where an
// application writes the password or card number it failed on.
func shownEvents(ev []Event, red *redact.Redactor) int {
	n := 0
	for i := range ev {
		e := &ev[i]
		var q, r, d int
		e.Queue, q = ShownClipped(red, e.Queue, maxName)
		e.Reason, r = ShownClipped(red, e.Reason, maxName)
		e.Detail, d = ShownClipped(red, e.Detail, maxDetail)
		n += q + r + d
	}
	return n
}

func kindRank(k EventKind) int {
	switch k {
	case EventPublished:
		return 0
	case EventReplay:
		return 2
	}
	return 1
}

// cleanName re-sanitises a name handed in by the caller, who may not have.
func cleanName(s string) string { return oneLine(s, maxName) }

func deathDetail(d Death) string {
	var b strings.Builder
	b.WriteString(exchangeDetail(cleanName(d.Exchange)))
	keys := make([]string, len(d.RoutingKeys))
	for i, k := range d.RoutingKeys {
		keys[i] = cleanName(k)
	}
	fmt.Fprintf(&b, ", routing keys [%s]", strings.Join(keys, ", "))
	if d.OriginalExpiration != "" {
		b.WriteString(", original expiration " + cleanName(d.OriginalExpiration) + " ms")
	}
	if d.Count > 1 {
		fmt.Fprintf(&b, "; time is the first of %d deaths", d.Count)
	}
	return b.String()
}

func exchangeDetail(x string) string {
	if x == "" {
		return "exchange (default)"
	}
	return "exchange " + clipText(x, maxName)
}

// deathTime finds the time of the x-death entry for {queue, reason}. For the
// last death it is only a true date when that entry counted a single death.
func deathTime(deaths []Death, queue, reason string, last bool) (time.Time, bool) {
	for _, d := range deaths {
		if cleanName(d.Queue) == queue && cleanName(string(d.Reason)) == reason {
			if last && d.Count > 1 {
				return time.Time{}, false
			}
			return d.Time, !d.Time.IsZero()
		}
	}
	return time.Time{}, false
}

func failureEvents(f *Failure) []Event {
	detail := "envelope failure"
	if f.ReasonCode != "" {
		detail += " " + clipText(f.ReasonCode, maxReasonCode)
	}
	if f.Consumer != "" {
		detail += ", consumer " + clipText(f.Consumer, maxName)
		if f.ConsumerVersion != "" {
			detail += " " + clipText(f.ConsumerVersion, maxName)
		}
	}
	first, hasFirst := parseTime(f.FirstFailedAt)
	last, hasLast := parseTime(f.LastFailedAt)
	var ev []Event
	if hasFirst || f.FirstFailedAt != "" {
		ev = append(ev, Event{Time: first, Kind: EventFailure, Detail: "first failure (" + detail + ")" + undated(hasFirst, f.FirstFailedAt)})
	}
	if hasLast || f.LastFailedAt != "" || len(ev) == 0 {
		e := Event{Time: last, Kind: EventFailure, Count: int64(f.Attempt), Detail: "last failure (" + detail + ")" + undated(hasLast, f.LastFailedAt)}
		if f.Attempt > 0 {
			e.Detail += fmt.Sprintf(", attempt %d", f.Attempt)
		}
		ev = append(ev, e)
	}
	return ev
}

// undated keeps a time the parser could not read visible as text.
func undated(parsed bool, raw string) string {
	if parsed || raw == "" {
		return ""
	}
	return ", at " + clipText(raw, maxName)
}

// retryEvents reads the headers applications set on their own retries
// (app-run retries): x-retry-count / x-last-error / x-last-error-time on each retry,
// x-error / x-failed-at when giving up, x-original-exchange /
// x-original-routingKey when republishing (Spring AMQP uses these too).
func retryEvents(h Headers) []Event {
	var ev []Event
	count, hasCount := headerInt(h, "x-retry-count")
	lastErr := headerText(h, "x-last-error")
	errAt, hasErrAt := headerTime(h, "x-last-error-time")
	if hasCount || lastErr != "" || hasErrAt {
		d := "application retry"
		if hasCount {
			d += fmt.Sprintf(" %d", count)
		}
		if lastErr != "" {
			d += ": " + lastErr
		}
		ev = append(ev, Event{Time: errAt, Kind: EventRetry, Count: count, Detail: d})
	}
	gaveUp := headerText(h, "x-error")
	failedAt, hasFailedAt := headerTime(h, "x-failed-at")
	if gaveUp != "" || hasFailedAt {
		d := "given up by the application"
		if gaveUp != "" {
			d += ": " + gaveUp
		}
		ev = append(ev, Event{Time: failedAt, Kind: EventRetry, Detail: d})
	}
	exch, hasExch := findHeader(h, "x-original-exchange")
	key := headerText(h, "x-original-routingKey")
	if hasExch || key != "" {
		x, _ := textOf(exch)
		d := "republished from " + exchangeDetail(clipText(strings.TrimSpace(sanitize.Line(x)), maxName)) + ", routing key " + clipText(key, maxName)
		if msg := headerText(h, "x-exception-message"); msg != "" {
			d += ": " + msg
		}
		ev = append(ev, Event{Kind: EventRetry, Detail: d})
	}
	return ev
}

// frameworkEvents reads the fault headers of MassTransit and NServiceBus.
// Their exception message is shown here, as text, never used as a code.
func frameworkEvents(h Headers) []Event {
	var ev []Event
	for _, f := range []struct{ who, typ, msg, at string }{
		{"MassTransit", massTransitType, "MT-Fault-Message", "MT-Fault-Timestamp"},
		{"NServiceBus", nServiceBusType, "NServiceBus.ExceptionInfo.Message", "NServiceBus.TimeOfFailure"},
	} {
		typ, msg := headerText(h, f.typ), headerText(h, f.msg)
		at, hasAt := headerTime(h, f.at)
		if f.who == "NServiceBus" && !hasAt {
			at, hasAt = nServiceBusTime(headerText(h, f.at))
		}
		if typ == "" && msg == "" && !hasAt {
			continue
		}
		d := f.who + " fault"
		if typ != "" {
			d += " " + typ
		}
		if msg != "" {
			d += ": " + msg
		}
		ev = append(ev, Event{Time: at, Kind: EventFailure, Detail: d})
	}
	return ev
}

// nServiceBusTime reads NServiceBus's wire format "2006-01-02 15:04:05:000000 Z".
func nServiceBusTime(s string) (time.Time, bool) {
	if len(s) < 20 {
		return time.Time{}, false
	}
	t, err := time.Parse("2006-01-02 15:04:05", s[:19])
	if err != nil {
		return time.Time{}, false
	}
	return believable(t)
}

func headerValue(h Headers, key string) any {
	v, _ := findHeader(h, key)
	return v
}

func headerInt(h Headers, key string) (int64, bool) {
	v, ok := findHeader(h, key)
	if !ok {
		return 0, false
	}
	return intOf(v)
}

func headerTime(h Headers, key string) (time.Time, bool) {
	v, ok := findHeader(h, key)
	if !ok {
		return time.Time{}, false
	}
	return timeOf(v)
}
