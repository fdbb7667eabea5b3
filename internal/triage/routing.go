package triage

import (
	"math"
	"sort"
	"strings"
)

// router answers routing questions about one topology. It indexes the
// bindings once, so that classifying a batch of thousands of messages does
// not rescan them per message.
type router struct {
	queues   map[string]Queue
	types    map[string]string // exchange name -> type
	bindings map[string][]Binding
	// deadLetterKeys maps each exchange that is some queue's effective DLX
	// to the dead-letter routing keys used with it ("" = the message's own).
	deadLetterKeys map[string]map[string]bool
	// frames tell application frames from framework ones (fingerprints).
	frames FrameRules
}

func newRouter(t Topology) *router {
	r := &router{
		queues:   make(map[string]Queue, len(t.Queues)),
		types:    make(map[string]string, len(t.Exchanges)),
		bindings: make(map[string][]Binding),

		deadLetterKeys: make(map[string]map[string]bool),
		frames:         NewFrameRules(t.AppFrames),
	}
	for _, q := range t.Queues {
		r.queues[q.Name] = q
		if q.HasDeadLetterExchange {
			keys := r.deadLetterKeys[q.DeadLetterExchange]
			if keys == nil {
				keys = map[string]bool{}
				r.deadLetterKeys[q.DeadLetterExchange] = keys
			}
			keys[q.DeadLetterRoutingKey] = keys[q.DeadLetterRoutingKey] || q.HasDeadLetterRoutingKey
		}
	}
	for _, x := range t.Exchanges {
		r.types[x.Name] = x.Type
	}
	for _, b := range t.Bindings {
		if b.Source == "" { // the default exchange's implicit bindings are not real ones
			continue
		}
		r.bindings[b.Source] = append(r.bindings[b.Source], b)
	}
	return r
}

// Routes returns the queues a message published to exchange with routingKey
// and headers would reach ("" is the default exchange). Exchange types the
// topology does not know (plugins) route to every bound destination, so a
// question like "can this reach the parking queue?" errs towards yes.
func (t Topology) Routes(exchange, routingKey string, headers Headers) []string {
	return newRouter(t).routes(exchange, routingKey, headers)
}

// match says how strictly bindings are matched.
type match int

const (
	matchExact      match = iota // key and headers as given
	matchAnyHeaders              // key as given, headers unknown: any headers binding may match
	matchAnything                // key and headers unknown: every binding may match
)

func (r *router) routes(exchange, key string, headers Headers) []string {
	return r.reach(exchange, key, headers, matchExact)
}

// reach follows bindings from exchange, through exchange-to-exchange
// bindings (each exchange once, so cycles end), to queues. Sorted, unique.
func (r *router) reach(exchange, key string, headers Headers, how match) []string {
	found := map[string]bool{}
	if exchange == "" {
		if _, ok := r.queues[key]; ok && how != matchAnything {
			found[key] = true
		}
	} else {
		r.walk(exchange, key, headers, how, found, map[string]bool{})
	}
	out := make([]string, 0, len(found))
	for q := range found {
		out = append(out, q)
	}
	sort.Strings(out)
	return out
}

func (r *router) walk(exchange, key string, headers Headers, how match, found, seen map[string]bool) {
	if seen[exchange] {
		return
	}
	seen[exchange] = true
	kind := r.types[exchange]
	for _, b := range r.bindings[exchange] {
		if how != matchAnything && !bindingMatches(kind, b, key, headers, how) {
			continue
		}
		if b.DestinationType == "exchange" {
			r.walk(b.Destination, key, headers, how, found, seen)
			continue
		}
		found[b.Destination] = true
	}
}

func bindingMatches(kind string, b Binding, key string, headers Headers, how match) bool {
	switch kind {
	case "direct":
		return b.RoutingKey == key
	case "fanout":
		return true
	case "topic":
		return topicMatches(b.RoutingKey, key)
	case "headers":
		if how == matchAnyHeaders {
			return true
		}
		return headersMatch(b.Arguments, headers)
	}
	return true // a plugin type (or an exchange missing from the topology): assume it may route
}

// topicMatches matches an AMQP topic pattern: words split on '.', '*' is
// exactly one word, '#' zero or more. Dynamic programming over (pattern,
// key) positions keeps a pattern full of '#' linear in the key's length
// times the pattern's, where backtracking would be exponential.
func topicMatches(pattern, key string) bool {
	p, k := strings.Split(pattern, "."), strings.Split(key, ".")
	// ok[j] says whether p[:i] matches k[:j], for the current i.
	ok := make([]bool, len(k)+1)
	ok[0] = true
	for _, w := range p {
		next := make([]bool, len(k)+1)
		for j := 0; j <= len(k); j++ {
			switch w {
			case "#": // zero words (ok[j]) or one more word (next[j-1])
				next[j] = ok[j] || (j > 0 && next[j-1])
			case "*":
				next[j] = j > 0 && ok[j-1]
			default:
				next[j] = j > 0 && ok[j-1] && k[j-1] == w
			}
		}
		ok = next
	}
	return ok[len(k)]
}

// headersMatch implements the headers exchange: x-match all (default) or any,
// ignoring binding arguments that start with "x-" unless the mode is
// all-with-x or any-with-x. A binding value of nil (void) only asks for the
// header to be present.
func headersMatch(args, headers Headers) bool {
	mode := "all"
	if v, ok := args["x-match"]; ok {
		if s, ok := textOf(v); ok {
			mode = s
		}
	}
	withX := strings.HasSuffix(mode, "-with-x")
	matchAny := strings.HasPrefix(mode, "any")
	matched, considered := 0, 0
	for k, want := range args {
		if k == "x-match" || (!withX && strings.HasPrefix(k, "x-")) {
			continue
		}
		considered++
		got, ok := headers[k]
		if ok && (want == nil || sameValue(want, got)) {
			matched++
			if matchAny {
				return true
			}
		} else if !matchAny {
			return false
		}
	}
	if matchAny {
		return false
	}
	return matched == considered
}

// sameValue compares a binding argument with a header value across the
// shapes they arrive in (management JSON gives float64, AMQP gives int64).
func sameValue(a, b any) bool {
	if fa, ok := numberOf(a); ok {
		fb, ok := numberOf(b)
		return ok && fa == fb
	}
	if sa, ok := a.(string); ok {
		sb, ok := textValue(b)
		return ok && sa == sb
	}
	if sa, ok := a.([]byte); ok {
		sb, ok := textValue(b)
		return ok && string(sa) == sb
	}
	if ba, ok := a.(bool); ok {
		bb, ok := b.(bool)
		return ok && ba == bb
	}
	return false
}

func textValue(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	}
	return "", false
}

func numberOf(v any) (float64, bool) {
	switch v.(type) {
	case float64, float32:
		f, ok := floatOf(v)
		return f, ok && !math.IsNaN(f)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		n, _ := intOf(v)
		return float64(n), true
	}
	return 0, false
}

// deadLetterTargets are the queues a queue's dead letters can reach through
// its effective DLX. With a dead-letter routing key the key is known and is
// followed (headers stay unknown); without one, the message's own keys are
// unknown, so every destination of the DLX counts. For DLX "" (the default
// exchange) without a routing key the target depends on each message: none.
func (r *router) deadLetterTargets(q Queue) []string {
	if !q.HasDeadLetterExchange {
		return nil
	}
	if q.HasDeadLetterRoutingKey {
		return r.reach(q.DeadLetterExchange, q.DeadLetterRoutingKey, nil, matchAnyHeaders)
	}
	if q.DeadLetterExchange == "" {
		return nil
	}
	return r.reach(q.DeadLetterExchange, "", nil, matchAnything)
}

// Router answers the routing questions of one topology for the packages
// beside the read path (the doctor); it indexes the bindings once.
type Router struct{ r *router }

// NewRouter indexes t.
func NewRouter(t Topology) *Router { return &Router{newRouter(t)} }

// Queue finds a queue by name.
func (r *Router) Queue(name string) (Queue, bool) {
	q, ok := r.r.queues[name]
	return q, ok
}

// ExchangeType is an exchange's type; ok is false when the topology lacks it.
func (r *Router) ExchangeType(name string) (kind string, ok bool) {
	kind, ok = r.r.types[name]
	return kind, ok
}

// ReachKey lists the queues exchange routes key to when the headers are
// unknown: any headers binding may match. Sorted, unique.
func (r *Router) ReachKey(exchange, key string) []string {
	return r.r.reach(exchange, key, nil, matchAnyHeaders)
}

// ReachAnyKey lists every queue exchange may route to, key and headers
// unknown. The default exchange routes an unknown key nowhere we can name.
func (r *Router) ReachAnyKey(exchange string) []string {
	return r.r.reach(exchange, "", nil, matchAnything)
}
