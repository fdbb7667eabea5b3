package replay

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
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
func OriginalRoute(t triage.Triaged) (triage.Route, bool) {
	h := t.Message.Headers
	first := func() (triage.Route, bool) {
		ex, hasEx := triage.RawHeaderText(h, "x-first-death-exchange")
		q, _ := triage.RawHeaderText(h, "x-first-death-queue")
		reason, _ := triage.RawHeaderText(h, "x-first-death-reason")
		raw := triage.RawDeaths(h)
		if hasEx {
			for _, d := range raw {
				if d.Queue == q && (reason == "" || string(d.Reason) == reason) && len(d.RoutingKeys) > 0 {
					return triage.Route{Exchange: ex, RoutingKey: d.RoutingKeys[0]}, true
				}
			}
		}
		if len(raw) == 1 && len(raw[0].RoutingKeys) > 0 {
			return triage.Route{Exchange: raw[0].Exchange, RoutingKey: raw[0].RoutingKeys[0]}, true
		}
		return triage.Route{}, false
	}
	published := func() (triage.Route, bool) {
		ex, hasEx := triage.RawHeaderText(h, "x-original-exchange")
		key, hasKey := triage.RawHeaderText(h, "x-original-routingKey")
		if hasEx || hasKey {
			return triage.Route{Exchange: ex, RoutingKey: key}, true
		}
		body, _ := triage.DecodeBody(t.Message.Body, t.Message.Properties.ContentEncoding)
		return envelopeRoute(body)
	}
	if t.Reason != triage.ReasonPublished {
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

// envelopeRoute reads a route an envelope states at its top level.
func envelopeRoute(body []byte) (triage.Route, bool) {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return triage.Route{}, false
	}
	var env struct {
		Exchange   *string `json:"original_exchange"`
		RoutingKey *string `json:"original_routing_key"`
	}
	if json.Unmarshal(trimmed, &env) != nil || (env.Exchange == nil && env.RoutingKey == nil) {
		return triage.Route{}, false
	}
	var r triage.Route
	if env.Exchange != nil {
		r.Exchange = *env.Exchange
	}
	if env.RoutingKey != nil {
		r.RoutingKey = *env.RoutingKey
	}
	return r, true
}

// CopyHeaders are the headers of a replayed copy of m: all of its own,
// plus the replay id and time, the item id, the best attempt count so far
// (dlqt-attempts) and a copy of x-death (dlqt-deaths), so that a broker that
// resets x-death on the next death (4.x) loses no history. A copy replayed
// again keeps the dlqt-deaths of its first replay when it has no x-death.
// A full scan's mark (dlqt-full-scan) is bookkeeping of the parking queue
// and stays behind: the destination's consumers never see it.
func CopyHeaders(m triage.Message, itemID, replayID string, attempts int, at time.Time) triage.Headers {
	h := make(triage.Headers, len(m.Headers)+5)
	for k, v := range m.Headers {
		h[k] = v
	}
	delete(h, triage.HeaderFullScan)
	h[triage.HeaderReplayID] = replayID
	h[triage.HeaderReplayItem] = itemID
	h[triage.HeaderReplayedAt] = at.UTC().Truncate(time.Second)
	if n, ok := triage.RecordedAttempts(m.Headers); !ok || int64(attempts) > n {
		h[triage.HeaderAttempts] = int64(attempts)
	}
	if d := triage.KeptDeaths(m.Headers); len(d) > 0 {
		h[triage.HeaderDeaths] = d
	}
	return h
}
