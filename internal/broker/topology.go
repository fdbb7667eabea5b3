package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/dlqt/dlqt/internal/triage"
)

// queueJSON is one element of GET /api/queues/{vhost}, with the fields
// rabbit-hole v2.16.0 does not model.
type queueJSON struct {
	Name                 string          `json:"name"`
	Type                 string          `json:"type"`
	Messages             int             `json:"messages"`
	Consumers            int             `json:"consumers"`
	MessagesUnacked      int             `json:"messages_unacknowledged"`
	Arguments            map[string]any  `json:"arguments"`
	Policy               string          `json:"policy"`
	EffectivePolicy      map[string]any  `json:"effective_policy_definition"`
	HeadMessageTimestamp json.RawMessage `json:"head_message_timestamp"`
	MessagesDLX          int             `json:"messages_dlx"`
	MessageBytes         int64           `json:"message_bytes"`
	MessageStats         messageStats    `json:"message_stats"`
	MessagesDetails      depthDetails    `json:"messages_details"`
}

// depthDetails is a queue's messages_details: the rate the depth changes
// at, and its samples (newest first) over queueHistory.
type depthDetails struct {
	Rate    float64 `json:"rate"`
	Samples []struct {
		Sample    int   `json:"sample"`
		Timestamp int64 `json:"timestamp"` // ms
	} `json:"samples"`
}

// heldSince is the time of the oldest sample from which the depth never
// fell and was never zero up to the newest one: the messages there then are
// all still there. Zero when the queue is empty or there are no samples.
func (d depthDetails) heldSince() time.Time {
	var since int64
	for i, s := range d.Samples {
		if s.Sample <= 0 || (i > 0 && s.Sample > d.Samples[i-1].Sample) {
			break
		}
		since = s.Timestamp
	}
	if since == 0 || since == d.Samples[0].Timestamp {
		return time.Time{} // "at least 0s" says nothing
	}
	return time.UnixMilli(since).UTC()
}

// messageStats is a queue's message_stats. Filtered by ?columns=, the
// management API sends an empty list ([]) for a queue whose stats lack the
// asked-for column (seen on 3.10 for a queue that never had a publish).
type messageStats struct {
	PublishDetails struct {
		Rate float64 `json:"rate"`
	} `json:"publish_details"`
}

func (m *messageStats) UnmarshalJSON(data []byte) error {
	if t := strings.TrimSpace(string(data)); strings.HasPrefix(t, "[") {
		*m = messageStats{}
		return nil
	}
	type plain messageStats
	return json.Unmarshal(data, (*plain)(m))
}

// queueColumns asks only for what queueJSON reads: a full queue object
// carries garbage-collection and backing-queue details, which add up on a
// broker with thousands of queues, and 3.13 dropped some rarely used
// metrics from it altogether. Every column may be missing (a queue whose
// statistics are not in yet, or a version without it) and reads as zero.
// Mirroring fields (slave_nodes, ha-* policy keys) are never asked for:
// 4.0 removed classic mirroring.
const queueColumns = "?columns=name,type,messages,messages_unacknowledged,consumers,arguments,policy,effective_policy_definition," +
	"head_message_timestamp,messages_dlx,message_stats.publish_details.rate,message_bytes,messages_details.rate"

// queueHistory asks for an hour of each queue's depth, a sample every 5
// minutes (13 per queue; the broker keeps an hour at one a minute by
// default): how long its messages have waited, known from the first poll.
// A request of its own: with lengths_incr the API averages the depth rate
// over the increment, and the queue list wants the rate of the last 5 s.
const queueHistory = "?columns=name,messages_details&lengths_age=3600&lengths_incr=300"

// Topology reads the vhost's exchanges, bindings and queues.
func (l *Live) Topology(ctx context.Context) (triage.Topology, error) {
	top := triage.Topology{Vhost: l.cfg.Vhost, AppFrames: l.appFrames}
	var raw []queueJSON
	if err := l.mgmt.get(ctx, "queues/"+url.PathEscape(l.cfg.Vhost)+queueColumns, &raw); err != nil {
		return top, l.vhostErr(err)
	}
	top.Broker = l.broker(ctx)
	held := l.heldSince(ctx)
	for _, q := range raw {
		if strings.HasPrefix(q.Name, LeasePrefix) {
			continue // dlqt's own lease, not the user's topology
		}
		dq := q.domain(top.Broker.Version)
		if dq.Messages > 0 {
			dq.HeldSince = held[q.Name]
		}
		top.Queues = append(top.Queues, dq)
	}
	if err := ctx.Err(); err != nil {
		return top, err
	}
	xs, err := l.exchanges(ctx)
	if err != nil {
		return top, err
	}
	hasDefault := false
	for _, x := range xs {
		top.Exchanges = append(top.Exchanges, x)
		hasDefault = hasDefault || x.Name == ""
	}
	if !hasDefault { // the default exchange routes by queue name; never leave it out
		top.Exchanges = append([]triage.Exchange{{Name: "", Type: "direct"}}, top.Exchanges...)
	}
	rh, err := l.mgmt.rabbitHole(ctx)
	if err != nil {
		return top, err
	}
	bs, err := rh.ListBindingsIn(l.cfg.Vhost)
	if err != nil {
		return top, l.rabbitHoleErr(err)
	}
	for _, b := range bs {
		top.Bindings = append(top.Bindings, triage.Binding{
			Source:          b.Source,
			Destination:     b.Destination,
			DestinationType: b.DestinationType,
			RoutingKey:      b.RoutingKey,
			Arguments:       jsonToHeaders(b.Arguments),
		})
	}
	return top, nil
}

// heldSince reads each queue's depth history (queueHistory) for
// Queue.HeldSince. The history is a nicety: when it cannot be read the
// queues have none, and the topology is read all the same.
func (l *Live) heldSince(ctx context.Context) map[string]time.Time {
	var raw []struct {
		Name            string       `json:"name"`
		MessagesDetails depthDetails `json:"messages_details"`
	}
	if err := l.mgmt.get(ctx, "queues/"+url.PathEscape(l.cfg.Vhost)+queueHistory, &raw); err != nil {
		return nil
	}
	out := make(map[string]time.Time, len(raw))
	for _, q := range raw {
		if at := q.MessagesDetails.heldSince(); !at.IsZero() {
			out[q.Name] = at
		}
	}
	return out
}

// exchangeJSON is one element of GET /api/exchanges/{vhost}, with the
// policy name rabbit-hole v2.16.0 does not model.
type exchangeJSON struct {
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	Arguments map[string]any `json:"arguments"`
	Policy    string         `json:"policy"`
}

// exchanges reads the vhost's exchanges with their alternate exchange:
// the argument, else the policy's (the listing names the policy only, so
// its definition comes from the vhost's policies). A user who may not list
// policies still gets the exchanges, without policy-set alternates.
func (l *Live) exchanges(ctx context.Context) ([]triage.Exchange, error) {
	var raw []exchangeJSON
	if err := l.mgmt.get(ctx, "exchanges/"+url.PathEscape(l.cfg.Vhost)+"?columns=name,type,arguments,policy", &raw); err != nil {
		return nil, l.vhostErr(err)
	}
	var policies map[string]string // policy name -> alternate-exchange
	out := make([]triage.Exchange, 0, len(raw))
	for _, x := range raw {
		ae, _ := x.Arguments["alternate-exchange"].(string)
		if ae == "" && x.Policy != "" {
			if policies == nil {
				policies = l.policyAlternates(ctx)
			}
			ae = policies[x.Policy]
		}
		out = append(out, triage.Exchange{Name: x.Name, Type: x.Type, AlternateExchange: ae})
	}
	return out, nil
}

// policyAlternates maps each policy of the vhost to the alternate exchange
// it sets; empty when the policies cannot be read.
func (l *Live) policyAlternates(ctx context.Context) map[string]string {
	var raw []struct {
		Name       string         `json:"name"`
		Definition map[string]any `json:"definition"`
	}
	out := map[string]string{}
	if err := l.mgmt.get(ctx, "policies/"+url.PathEscape(l.cfg.Vhost), &raw); err != nil {
		return out
	}
	for _, p := range raw {
		if ae, ok := p.Definition["alternate-exchange"].(string); ok {
			out[p.Name] = ae
		}
	}
	return out
}

// queueInfo reads one queue and what reading it costs; an unknown queue
// wraps triage.ErrNotFound.
func (l *Live) queueInfo(ctx context.Context, name string) (triage.Queue, triage.DeliveryCost, error) {
	var q queueJSON
	err := l.mgmt.get(ctx, "queues/"+url.PathEscape(l.cfg.Vhost)+"/"+url.PathEscape(name)+queueColumns, &q)
	if errors.Is(err, errHTTPNotFound) {
		return triage.Queue{}, triage.DeliveryCost{}, notFound(fmt.Sprintf("queue %q does not exist in vhost %q", name, l.cfg.Vhost))
	}
	if err != nil {
		return triage.Queue{}, triage.DeliveryCost{}, err
	}
	b := l.broker(ctx)
	dq := q.domain(b.Version)
	return dq, triage.DeliveryCostOf(dq, b), nil
}

// vhostErr reads a 404 on a vhost-wide listing as a vanished vhost; get
// has explained every other error already.
func (l *Live) vhostErr(err error) error {
	if errors.Is(err, errHTTPNotFound) {
		return notFound(fmt.Sprintf("vhost %q does not exist", l.cfg.Vhost))
	}
	return err
}

// rabbitHoleErr is vhostErr for rabbit-hole's raw errors.
func (l *Live) rabbitHoleErr(err error) error {
	var rme rabbithole.ErrorResponse
	if errors.As(err, &rme) && rme.StatusCode == http.StatusNotFound {
		return l.vhostErr(errHTTPNotFound)
	}
	return l.mgmt.explain(err)
}

// domain turns the management view of a queue into a triage.Queue. Each
// effective setting is resolved as the broker does (rabbit_amqqueue_process,
// 3.10): dead-letter exchange, routing key and overflow take the queue
// argument over the policy; message TTL and max length take the lower of
// the two; the delivery limit too (checked on 3.10.8: argument
// x-delivery-limit 5 with a policy delivery-limit 1 dead-letters on the
// second return), with 4.0's reading of negative limits
// (triage.ResolveDeliveryLimit) on broker version v.
func (q queueJSON) domain(v triage.BrokerVersion) triage.Queue {
	args := jsonToHeaders(q.Arguments)
	pol := jsonToHeaders(q.EffectivePolicy)
	out := triage.Queue{
		Name:        q.Name,
		Type:        q.Type,
		Messages:    q.Messages,
		Bytes:       q.MessageBytes,
		Consumers:   q.Consumers,
		Unacked:     q.MessagesUnacked,
		Arguments:   args,
		Policy:      q.Policy,
		PublishRate: q.MessageStats.PublishDetails.Rate,
		DepthRate:   q.MessagesDetails.Rate,
		HeldSince:   q.MessagesDetails.heldSince(), // when the history came with it
	}
	if out.Type == "" {
		out.Type = triage.QueueClassic // before 3.8 the API left it out
	}
	if sec, ok := headTimestamp(q.HeadMessageTimestamp); ok {
		out.HeadPublished = time.Unix(sec, 0).UTC()
	}
	if v, fromPolicy, ok := argElsePolicy[string](args, pol, "dead-letter-exchange"); ok {
		out.DeadLetterExchange, out.HasDeadLetterExchange, out.DLXFromPolicy = v, true, fromPolicy
	}
	if v, _, ok := argElsePolicy[string](args, pol, "dead-letter-routing-key"); ok {
		out.DeadLetterRoutingKey, out.HasDeadLetterRoutingKey = v, true
	}
	if v, _, ok := argElsePolicy[string](args, pol, "overflow"); ok {
		out.Overflow = v
	}
	out.MessageTTL = lowerOf(args, pol, "message-ttl")
	out.MaxLength = lowerOf(args, pol, "max-length")
	out.MaxLengthBytes = lowerOf(args, pol, "max-length-bytes")
	arg, hasArg := args["x-delivery-limit"].(int64)
	p, hasPol := pol["delivery-limit"].(int64)
	out.DeliveryLimit, out.DeliveryLimitSet = triage.ResolveDeliveryLimit(arg, p, hasArg, hasPol, v)
	return out
}

// argElsePolicy reads "x-"+key from the arguments, else key from the policy.
func argElsePolicy[T any](args, pol map[string]any, key string) (v T, fromPolicy, ok bool) {
	if v, ok := args["x-"+key].(T); ok {
		return v, false, true
	}
	if v, ok := pol[key].(T); ok {
		return v, true, true
	}
	return v, false, false
}

func lowerOf(args, pol map[string]any, key string) int64 {
	a, aok := args["x-"+key].(int64)
	p, pok := pol[key].(int64)
	switch {
	case aok && pok:
		return min(a, p)
	case aok:
		return a
	case pok:
		return p
	}
	return 0
}

// headTimestamp reads head_message_timestamp: seconds, or "" / null when the
// head message has no timestamp property (or the queue is empty).
func headTimestamp(raw json.RawMessage) (int64, bool) {
	var n json.Number
	if len(raw) == 0 || json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	sec, err := n.Int64()
	if err != nil || sec <= 0 {
		return 0, false
	}
	return sec, true
}

// jsonToHeaders turns decoded JSON (arguments, policy definitions) into
// Headers: integral numbers become int64, as they were declared over AMQP.
func jsonToHeaders(m map[string]any) triage.Headers {
	if m == nil {
		return nil
	}
	h := make(triage.Headers, len(m))
	for k, v := range m {
		h[k] = jsonValue(v)
	}
	return h
}

func jsonValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v)
		}
		return v
	case map[string]any:
		return jsonToHeaders(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonValue(e)
		}
		return out
	}
	return v
}
