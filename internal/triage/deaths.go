package triage

import "time"

// maxName bounds queue, exchange and routing-key names taken from headers
// (the broker caps real names at 255 bytes).
const maxName = 255

// ParseDeaths decodes the x-death header in header order. Only x-death[0] is
// reliably the most recent death: on RabbitMQ <= 3.12 older entries get
// reordered. Each entry's Time is the FIRST death for its {queue, reason}.
// Entries that are not tables, or carry neither queue nor reason, are skipped.
func ParseDeaths(h Headers) []Death {
	return parseDeaths(h, func(s string) string { return oneLine(s, maxName) })
}

// parseDeaths decodes x-death with clean applied to every string. Analyze
// classifies with the raw names (clean = identity) so that they match the
// topology exactly, and shows the sanitised ones.
func parseDeaths(h Headers, clean func(string) string) []Death {
	v, ok := findHeader(h, "x-death")
	if !ok {
		return nil
	}
	entries, ok := listOf(v)
	if !ok {
		if one, isMap := mapOf(v); isMap { // a lone table instead of an array
			entries = []any{one}
		}
	}
	var deaths []Death
	for _, e := range entries {
		if d, ok := parseDeath(e, clean); ok {
			deaths = append(deaths, d)
		}
	}
	return deaths
}

func parseDeath(v any, clean func(string) string) (Death, bool) {
	t, ok := mapOf(v)
	if !ok {
		return Death{}, false
	}
	str := func(key string) (string, bool) {
		if x, ok := t[key]; ok {
			if s, ok := textOf(x); ok {
				return clean(s), true
			}
		}
		return "", false
	}
	var d Death
	queue, hasQueue := str("queue")
	reason, hasReason := str("reason")
	if !hasQueue && !hasReason {
		return Death{}, false
	}
	d.Queue, d.Reason = queue, Reason(reason)
	d.Exchange, _ = str("exchange")
	d.OriginalExpiration, _ = str("original-expiration")
	if n, ok := intOf(t["count"]); ok && n > 0 {
		d.Count = n
	}
	if tm, ok := timeOf(t["time"]); ok {
		d.Time = tm
	}
	if keys, ok := listOf(t["routing-keys"]); ok {
		for _, k := range keys {
			if s, ok := textOf(k); ok {
				d.RoutingKeys = append(d.RoutingKeys, clean(s))
			}
		}
	} else if s, ok := str("routing-keys"); ok { // a lone key instead of an array
		d.RoutingKeys = []string{s}
	}
	return d, true
}

// DiedIn is the queue a message died in: the queue of x-death[0] (the
// most recent death), else x-first-death-queue; "" for a message that
// never died (published straight to a parking queue).
func DiedIn(t Triaged) string {
	if len(t.Deaths) > 0 && t.Deaths[0].Queue != "" {
		return t.Deaths[0].Queue
	}
	return oneLine(headerString(t.Message.Headers, "x-first-death-queue"), maxName)
}

// FirstDied is the earliest known time a message died or failed: the
// earliest x-death time or failure.first_failed_at, else DiedAt.
func FirstDied(t Triaged) time.Time {
	var first time.Time
	earlier := func(at time.Time, ok bool) {
		if ok && !at.IsZero() && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	for _, d := range t.Deaths {
		earlier(d.Time, true)
	}
	if f := t.Envelope.Failure; f != nil {
		earlier(parseTime(f.FirstFailedAt))
	}
	earlier(t.DiedAt, true)
	return first
}
