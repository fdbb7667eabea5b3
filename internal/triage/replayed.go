package triage

// dlqt's own headers on a replayed copy, beyond those the timeline reads
// (timeline.go): the item a copy belongs to, for matching returns and
// failed-again copies even when a message has no message_id, and a copy of
// x-death, which brokers >= 3.13 drop or ignore on a republished message.
// The replay writes them (triage/replay); the timeline reads them back and
// the broker matches copies by them.
const (
	hdrReplayItem = "dlqt-replay-item"
	hdrDeaths     = "dlqt-deaths"
)

// HeaderFullScan marks each copy a full scan moves (broker/fullscan.go)
// with the scan's id: bookkeeping for the queue it was scanned in, which a
// replay leaves behind (replay.CopyHeaders).
const HeaderFullScan = "dlqt-full-scan"

// The names of dlqt's replay headers.
const (
	HeaderReplayID   = hdrReplayID
	HeaderReplayItem = hdrReplayItem
	HeaderReplayedAt = hdrReplayedAt
	HeaderAttempts   = hdrAttempts
	HeaderDeaths     = hdrDeaths
)

// AttemptsOf is the best evidence of how many times m was tried, read from
// the message alone (where it is queued now is not known).
func AttemptsOf(m Message) int {
	return bestAttempts(m.Headers, EnvelopeOf(m), ParseDeaths(m.Headers), false)
}

// RecordedAttempts is the dlqt-attempts header a message carries, if any.
func RecordedAttempts(h Headers) (int64, bool) {
	return headerInt(h, hdrAttempts)
}

// RawDeaths decodes x-death with the names as the broker wrote them, never
// sanitised: for routing a message back, never for showing.
func RawDeaths(h Headers) []Death {
	return parseDeaths(h, func(s string) string { return s })
}

// RawHeaderText is the text of header key (case-insensitive, as the read
// path finds headers), never sanitised: for routing, never for showing.
func RawHeaderText(h Headers, key string) (string, bool) {
	v, ok := findHeader(h, key)
	if !ok {
		return "", false
	}
	return textOf(v)
}

// KeptDeaths is x-death plus the entries of an earlier replay's
// dlqt-deaths that x-death no longer has (4.x restarted it), so history
// survives any number of replays.
func KeptDeaths(h Headers) []any {
	var out []any
	seen := map[deathKey]bool{}
	for _, name := range []string{"x-death", hdrDeaths} {
		v, ok := findHeader(h, name)
		if !ok {
			continue
		}
		entries, ok := listOf(v)
		if !ok {
			continue
		}
		for _, e := range entries {
			d, ok := parseDeath(e, func(s string) string { return s })
			if !ok || seen[keyOf(d)] {
				continue
			}
			seen[keyOf(d)] = true
			out = append(out, e)
		}
	}
	return out
}

// deathKey names one x-death entry across a reset: its {queue, reason}
// and the time of its first death.
type deathKey struct {
	queue, reason string
	time          int64
}

func keyOf(d Death) deathKey { return deathKey{d.Queue, string(d.Reason), d.Time.Unix()} }

// replayedDeaths are the deaths an earlier replay kept in dlqt-deaths that
// x-death no longer shows, as timeline events.
func replayedDeaths(h Headers, deaths []Death) []Event {
	var ev []Event
	for _, d := range keptOnly(h, deaths, func(s string) string { return oneLine(s, maxName) }) {
		ev = append(ev, Event{Time: d.Time, Kind: EventDeath, Queue: d.Queue, Reason: string(d.Reason), Count: d.Count,
			Detail: deathDetail(d) + "; kept by dlqt across a replay"})
	}
	return ev
}

// keptOnly are the deaths an earlier replay kept in dlqt-deaths that x-death
// no longer shows: on 4.x a replayed message's x-death starts again, and
// its history would otherwise vanish. On <= 3.12 x-death kept counting the
// same entries, which then count once. An x-death entry dated at or after
// the replay is a new death on every version, never the kept one, even when
// it has the same {queue, reason} and second.
func keptOnly(h Headers, deaths []Death, clean func(string) string) []Death {
	v, ok := findHeader(h, hdrDeaths)
	if !ok {
		return nil
	}
	replayedAt, dated := headerTime(h, hdrReplayedAt)
	now := map[deathKey]bool{}
	for _, d := range deaths {
		if !dated || d.Time.Before(replayedAt) {
			now[keyOf(d)] = true
		}
	}
	var out []Death
	for _, d := range parseDeaths(Headers{"x-death": v}, clean) {
		if !now[keyOf(d)] {
			out = append(out, d)
		}
	}
	return out
}
