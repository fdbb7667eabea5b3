package triage

import (
	"bytes"
	"encoding/json"
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
	if o := t.origin; o != nil { // an index entry's, worked out as it was read
		return o.route, o.known
	}
	return originalRoute(t)
}

func originalRoute(t Triaged) (Route, bool) {
	h := t.Message.Headers
	first := func() (Route, bool) {
		ex, hasEx := RawHeaderText(h, "x-first-death-exchange")
		q, _ := RawHeaderText(h, "x-first-death-queue")
		reason, _ := RawHeaderText(h, "x-first-death-reason")
		raw := RawDeaths(h)
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
		ex, hasEx := RawHeaderText(h, "x-original-exchange")
		key, hasKey := RawHeaderText(h, "x-original-routingKey")
		if hasEx || hasKey {
			return Route{Exchange: ex, RoutingKey: key}, true
		}
		body, _ := DecodeBody(t.Message.Body, t.Message.Properties.ContentEncoding)
		return envelopeRoute(body)
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

// envelopeRoute reads a route an envelope states at its top level.
func envelopeRoute(body []byte) (Route, bool) {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(trimmed) == 0 || trimmed[0] != '{' || !mayStateRoute(trimmed) {
		return Route{}, false
	}
	return decodeEnvelopeRoute(trimmed)
}

// decodeEnvelopeRoute is envelopeRoute's decoding of a JSON object.
func decodeEnvelopeRoute(trimmed []byte) (Route, bool) {
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

// mayStateRoute is a look at body before it is decoded for a route (every
// message of a read is looked at as it is indexed): false only where
// decoding cannot find one. encoding/json matches a key whatever its case
// and reads \u escapes in it; "original_" has no letter that folds to a
// non-ASCII one (k and s do).
func mayStateRoute(body []byte) bool {
	if bytes.Contains(body, []byte(`\u`)) {
		return true
	}
	const key = "original_"
	for i := 0; i+len(key) <= len(body); i++ {
		if body[i]|0x20 == 'o' && bytes.EqualFold(body[i:i+len(key)], []byte(key)) {
			return true
		}
	}
	return false
}

// origin is an index entry's original route (OriginalRoute), worked out
// from the whole message as it was read, so that a plan of a whole queue
// routes its index entries without reading each back from disk.
type origin struct {
	route Route
	known bool
}

// RoutedOnRead says whether OriginalRoute can answer for t without its
// headers: t is whole, or an index entry whose route was worked out as it
// was read.
func RoutedOnRead(t Triaged) bool { return !t.Indexed() || t.origin != nil }

// originOf is t's origin for its index entry, shared with the entries of
// the same route (a queue's messages mostly came one way). Nil, and read
// back when asked, for a compressed body: its envelope would be inflated
// for every message read, for a route its headers do not state.
func (s *Spilled) originOf(t Triaged) *origin {
	if t.Message.Properties.ContentEncoding != "" {
		return nil
	}
	r, known := originalRoute(t)
	o := origin{route: r, known: known}
	if p, ok := s.origins[o]; ok {
		return p
	}
	p := &o
	if len(s.origins) < maxInterned {
		if s.origins == nil {
			s.origins = map[origin]*origin{}
		}
		s.origins[o] = p
	}
	return p
}
