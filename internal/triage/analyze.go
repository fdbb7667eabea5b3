package triage

import (
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

// Analyze derives everything dlqt shows from a batch. It never changes the
// messages; red may be nil only in tests that want no redaction. Messages
// are analysed on every core: each is independent of the others but for
// its identity, which is numbered over the whole batch in between.
func Analyze(b Batch, top Topology, red *redact.Redactor) []Triaged {
	r := newRouter(top)
	envs := make([]Envelope, len(b.Messages))
	inParallel(len(b.Messages), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			envs[i] = EnvelopeOf(b.Messages[i])
		}
	})
	ids := Identify(b.Messages, envs)
	out := make([]Triaged, len(b.Messages))
	inParallel(len(b.Messages), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = analyzeOne(r, b.Messages[i], envs[i], ids[i], red, true)
		}
	})
	return out
}

// analyzeOne is one message understood, given its envelope and identity.
// analyzeOne triages m. Without details it renders no payload and builds
// no timeline, the two costliest parts (half of the time and most of the
// allocations): grouping, filtering on fields and the lists need neither.
func analyzeOne(r *router, m Message, env Envelope, id string, red *redact.Redactor, details bool) Triaged {
	deaths := ParseDeaths(m.Headers)
	raw := parseDeaths(m.Headers, func(s string) string { return s })
	var p Payload
	var timeline []Event
	var masked int
	if details {
		p = RenderMessage(m, red)
		timeline, masked = BuildTimeline(m, env, deaths, red)
	}
	delivery, _ := headerInt(m.Headers, "x-delivery-count")
	reason := reasonOf(r, m, raw, deaths)
	died := latestDeath(m.Headers, env, deaths)
	if ts, ok := believable(m.Properties.Timestamp); ok && died.IsZero() && reason == ReasonPublished {
		// An application that parked a message with no failure time of its
		// own still stamped when it published it here: that is when it died.
		died = ts
	}
	trace, _ := TraceIDOf(m.Headers, env)
	code, fault, fingerprinted := reasonCode(m, env, r.frames)
	t := Triaged{
		Message:       m,
		ID:            id,
		Envelope:      env,
		Deaths:        deaths,
		Reason:        reason,
		ReasonCode:    code,
		Attempts:      bestAttempts(m.Headers, env, deaths, r.queues[m.Queue].Type == QueueQuorum),
		DeliveryCount: clampInt(delivery),
		DiedAt:        died,
		Timeline:      timeline,
		Payload:       p.Text,
		PayloadBytes:  len(m.Body),
		Binary:        p.Binary,
		Redactions:    p.Redactions,
		Decoding:      p.Decoding,
		TraceID:       trace,

		TimelineRedactions: masked,
	}
	if fingerprinted {
		t.ExceptionType, t.ThrownAt = fault.ExceptionType, fault.ThrownAt()
	}
	return t
}

// parallelFrom is the batch size from which work is split across cores:
// below it, starting goroutines costs more than it saves.
const parallelFrom = 512

// inParallel runs work over [0, n) in one contiguous chunk per core and
// waits for all of them.
func inParallel(n int, work func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n/parallelFrom+1)
	if workers <= 1 {
		work(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		wg.Go(func() { work(lo, min(lo+chunk, n)) })
	}
	wg.Wait()
}

// reasonOf classifies with the raw x-death names, which must match the
// topology exactly, and reports the sanitised reason string.
func reasonOf(r *router, m Message, raw, deaths []Death) Reason {
	if len(raw) > 0 && len(deaths) > 0 && raw[0].Reason != "" && r.brokerDeath(m, raw[0]) {
		return deaths[0].Reason
	}
	return ReasonPublished
}

// retryCounters are the headers in which applications and frameworks
// count tries: generic retry headers (Spring's retry interceptors among
// them), dlqt's own, NServiceBus's delayed retries and MassTransit's
// redeliveries. Celery's "retries" is read only beside its "task" header.
var retryCounters = []string{
	"x-retry-count", "x-retry-attempt", "x-retries", "x-retry", "x-attempts", "x-attempt", "retry-count",
	hdrAttempts, "NServiceBus.Retries", "NServiceBus.DelayedRetries", "MT-Redelivery-Count",
}

// bestAttempts is the best evidence of how many times the message was
// tried: the largest of the envelope's failure.attempt, every retry
// counter (retryCounters), x-delivery-count, and every death: the x-death
// counts summed over all entries (an expiry in a retry bucket follows a
// failed try too; a maxlen overflow is no try), deaths kept by a replay
// included, or without x-death the x-first/last-death headers. The
// largest, because each source can be
// reset or missing: 4.x restarts x-death after a replay, an app may not
// bump its counter, and x-death alone misses app-managed retries. In a
// quorum parking queue x-delivery-count counts returns to the parking
// queue itself (browsing included), not attempts, so it is left out there.
func bestAttempts(h Headers, env Envelope, deaths []Death, quorumHere bool) int {
	var best int64
	if env.Failure != nil {
		best = int64(env.Failure.Attempt)
	}
	keys := retryCounters
	if !quorumHere {
		keys = append(slices.Clip(keys), "x-delivery-count")
	}
	if headerText(h, "task") != "" { // a Celery task message
		keys = append(slices.Clip(keys), "retries")
	}
	for _, key := range keys {
		if n, ok := headerInt(h, key); ok && n > best {
			best = n
		}
	}
	var died int64
	all := slices.Concat(deaths, keptOnly(h, deaths, func(s string) string { return s }))
	for _, d := range all {
		if d.Reason == ReasonMaxlen {
			continue // pushed out by a length limit: never delivered, no try
		}
		if died += max(d.Count, 1); died < 0 { // overflow from garbage counts
			died = 1<<63 - 1
		}
	}
	if len(all) == 0 {
		died = deathHeaders(h)
	}
	return clampInt(max(best, died))
}

// deathHeaders counts the deaths the x-first/last-death headers prove when
// x-death is gone: one, or two when the first and the last differ (a
// maxlen overflow, no try, is not counted).
func deathHeaders(h Headers) int64 {
	death := func(prefix string) string {
		if Reason(headerText(h, prefix+"reason")) == ReasonMaxlen {
			return "\x00"
		}
		return headerText(h, prefix+"queue") + "\x00" + headerText(h, prefix+"reason")
	}
	first, last := death("x-first-death-"), death("x-last-death-")
	switch {
	case first != "\x00" && last != "\x00" && first != last:
		return 2
	case first != "\x00" || last != "\x00":
		return 1
	}
	return 0
}

// latestDeath is the latest known time the message died or failed: x-death times,
// the envelope's failure times, x-last-error-time, x-failed-at and the fault
// times of MassTransit and NServiceBus. An x-death
// time is the FIRST death of its {queue, reason} (RabbitMQ keeps no later
// one), so for a message that died many times in one queue this is a lower
// bound, and the application's own times are often the better evidence.
func latestDeath(h Headers, env Envelope, deaths []Death) time.Time {
	var latest time.Time
	later := func(t time.Time, ok bool) {
		if ok && t.After(latest) {
			latest = t
		}
	}
	for _, d := range deaths {
		later(d.Time, !d.Time.IsZero())
	}
	if f := env.Failure; f != nil {
		later(parseTime(f.LastFailedAt))
		later(parseTime(f.FirstFailedAt))
	}
	later(headerTime(h, "x-last-error-time"))
	later(headerTime(h, "x-failed-at"))
	for _, e := range frameworkEvents(h) { // MassTransit and NServiceBus fault times
		later(e.Time, !e.Time.IsZero())
	}
	return latest
}

func clampInt(n int64) int {
	const maxInt = int64(^uint(0) >> 1)
	switch {
	case n < 0:
		return 0
	case n > maxInt:
		return int(maxInt)
	}
	return int(n)
}
