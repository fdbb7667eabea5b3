package triage

import (
	"bytes"
	"encoding/json"
	"time"
)

// dlqt's replay headers beyond those the timeline reads (timeline.go): the
// item a copy belongs to, for matching returns and failed-again copies even
// when a message has no message_id, and a copy of x-death, which brokers
// >= 3.13 drop or ignore on a republished message.
const (
	hdrReplayItem = "dlqt-replay-item"
	hdrDeaths     = "dlqt-deaths"
)

// HeaderReplayID and HeaderReplayItem name the headers a port matches on.
const (
	HeaderReplayID   = hdrReplayID
	HeaderReplayItem = hdrReplayItem
)

// OriginalRoute is where a message was first published, as far as it says:
//
//   - a broker death: x-first-death-exchange and the routing keys of the
//     x-death entry of x-first-death-queue/-reason (the first key; a message
//     published with CC keys is replayed to its first key only);
//   - an application publish (and a death without first-death headers):
//     Spring's x-original-exchange / x-original-routingKey, else an envelope
//     "original_exchange"/"original_routing_key", else the only x-death entry.
//
// The values are the raw header values, never sanitised: they must route.
func OriginalRoute(t Triaged) (Route, bool) {
	h := t.Message.Headers
	first := func() (Route, bool) {
		ex, hasEx := rawText(h, "x-first-death-exchange")
		q, _ := rawText(h, "x-first-death-queue")
		reason, _ := rawText(h, "x-first-death-reason")
		raw := parseDeaths(h, func(s string) string { return s })
		if hasEx {
			for _, d := range raw {
				if d.Queue == q && (reason == "" || string(d.Reason) == reason) && len(d.RoutingKeys) > 0 {
					return Route{Exchange: ex, RoutingKey: d.RoutingKeys[0]}, true
				}
			}
		}
		if len(raw) == 1 && len(raw[0].RoutingKeys) > 0 {
			return Route{Exchange: raw[0].Exchange, RoutingKey: raw[0].RoutingKeys[0]}, true
		}
		return Route{}, false
	}
	published := func() (Route, bool) {
		ex, hasEx := rawText(h, "x-original-exchange")
		key, hasKey := rawText(h, "x-original-routingKey")
		if hasEx || hasKey {
			return Route{Exchange: ex, RoutingKey: key}, true
		}
		return envelopeRoute(t.Message.Body)
	}
	if t.Reason != ReasonPublished {
		if r, ok := first(); ok {
			return r, true
		}
		return published()
	}
	if r, ok := published(); ok {
		return r, true
	}
	return first()
}

func rawText(h Headers, key string) (string, bool) {
	v, ok := findHeader(h, key)
	if !ok {
		return "", false
	}
	return textOf(v)
}

// envelopeRoute reads a route an envelope states at its top level.
func envelopeRoute(body []byte) (Route, bool) {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Route{}, false
	}
	var env struct {
		Exchange   *string `json:"original_exchange"`
		RoutingKey *string `json:"original_routing_key"`
	}
	if json.Unmarshal(trimmed, &env) != nil || (env.Exchange == nil && env.RoutingKey == nil) {
		return Route{}, false
	}
	var r Route
	if env.Exchange != nil {
		r.Exchange = *env.Exchange
	}
	if env.RoutingKey != nil {
		r.RoutingKey = *env.RoutingKey
	}
	return r, true
}

// ReplayHeaders are the headers of a replayed copy of m: all of its own,
// plus the replay id and time, the item id, the best attempt count so far
// (dlqt-attempts) and a copy of x-death (dlqt-deaths), so that a broker that
// resets x-death on the next death (4.x) loses no history. A copy replayed
// again keeps the dlqt-deaths of its first replay when it has no x-death.
func ReplayHeaders(m Message, itemID, replayID string, attempts int, at time.Time) Headers {
	h := make(Headers, len(m.Headers)+5)
	for k, v := range m.Headers {
		h[k] = v
	}
	h[hdrReplayID] = replayID
	h[hdrReplayItem] = itemID
	h[hdrReplayedAt] = at.UTC().Truncate(time.Second)
	if n, ok := headerInt(m.Headers, hdrAttempts); !ok || int64(attempts) > n {
		h[hdrAttempts] = int64(attempts)
	}
	if d := keptDeaths(m.Headers); len(d) > 0 {
		h[hdrDeaths] = d
	}
	return h
}

// keptDeaths is x-death plus the entries of an earlier replay's
// dlqt-deaths that x-death no longer has (4.x restarted it), so history
// survives any number of replays.
func keptDeaths(h Headers) []any {
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
// x-death no longer shows, for the timeline: on 4.x a replayed message's
// x-death starts again, and its history would otherwise vanish.
func replayedDeaths(h Headers, deaths []Death) []Event {
	v, ok := findHeader(h, hdrDeaths)
	if !ok {
		return nil
	}
	now := map[deathKey]bool{}
	for _, d := range deaths {
		now[keyOf(d)] = true
	}
	var ev []Event
	for _, d := range parseDeaths(Headers{"x-death": v}, func(s string) string { return oneLine(s, maxName) }) {
		if now[keyOf(d)] {
			continue
		}
		ev = append(ev, Event{Time: d.Time, Kind: EventDeath, Queue: d.Queue, Reason: string(d.Reason), Count: d.Count,
			Detail: deathDetail(d) + "; kept by dlqt across a replay"})
	}
	return ev
}
