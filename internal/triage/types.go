// Package triage is dlqt's pure logic: it decodes what the broker returned into
// domain values (envelopes, deaths, timelines), classifies and groups messages,
// redacts and sanitises what reaches the screen. It does no I/O; the use cases
// reach the broker and the journal through the small interfaces defined here.
package triage

import (
	"context"
	"time"
)

// Reason says why a message sits in a parking queue: one of the broker's
// dead-letter reasons, or ReasonPublished when an application put it there.
type Reason string

const (
	ReasonRejected      Reason = "rejected"
	ReasonExpired       Reason = "expired"
	ReasonMaxlen        Reason = "maxlen"
	ReasonDeliveryLimit Reason = "delivery_limit"
	ReasonPublished     Reason = "published"
)

// Queue types as the management API names them.
const (
	QueueClassic = "classic"
	QueueQuorum  = "quorum"
	QueueStream  = "stream"
)

// Headers is an AMQP header table in plain Go values. Values are one of:
// string, int64, float64, bool, time.Time, []byte, []any, Headers, nil.
// The broker package converts amqp.Table into this shape, the snapshot file
// round-trips it, and everything in triage reads it.
type Headers map[string]any

// Properties are the AMQP basic properties of a message that dlqt keeps.
type Properties struct {
	MessageID       string    `json:"message_id,omitempty"`
	CorrelationID   string    `json:"correlation_id,omitempty"`
	ContentType     string    `json:"content_type,omitempty"`
	ContentEncoding string    `json:"content_encoding,omitempty"`
	Type            string    `json:"type,omitempty"`
	AppID           string    `json:"app_id,omitempty"`
	UserID          string    `json:"user_id,omitempty"`
	ReplyTo         string    `json:"reply_to,omitempty"`
	Expiration      string    `json:"expiration,omitempty"`
	Timestamp       time.Time `json:"timestamp,omitzero"`
	Priority        uint8     `json:"priority,omitempty"`
	DeliveryMode    uint8     `json:"delivery_mode,omitempty"`
}

// Message is one message as read from a parking queue, untouched: what the
// broker delivered, plus where it was read and in which position.
type Message struct {
	Queue       string     `json:"queue"`
	Position    int        `json:"position"` // 0-based order in which the browse saw it
	Redelivered bool       `json:"redelivered,omitempty"`
	Exchange    string     `json:"exchange"` // exchange of the delivery into the parking queue
	RoutingKey  string     `json:"routing_key"`
	Properties  Properties `json:"properties"`
	Headers     Headers    `json:"headers,omitempty"`
	Body        []byte     `json:"body"`
}

// Death is one x-death entry: the broker's compressed record of every time the
// message died in one queue for one reason. Time is the FIRST such death.
type Death struct {
	Queue              string    `json:"queue"`
	Reason             Reason    `json:"reason"`
	Count              int64     `json:"count"`
	Time               time.Time `json:"time,omitzero"`
	Exchange           string    `json:"exchange"`
	RoutingKeys        []string  `json:"routing_keys,omitempty"`
	OriginalExpiration string    `json:"original_expiration,omitempty"`
}

// Failure is the failure block an application adds to its envelope.
type Failure struct {
	ReasonCode      string `json:"reason_code,omitempty"`
	Consumer        string `json:"consumer,omitempty"`
	ConsumerVersion string `json:"consumer_version,omitempty"`
	Attempt         int    `json:"attempt,omitempty"`
	FirstFailedAt   string `json:"first_failed_at,omitempty"`
	LastFailedAt    string `json:"last_failed_at,omitempty"`
}

// Envelope is the diagnostic envelope applications attach to a parked
// message (docs/ARCHITECTURE.md), decoded tolerantly: any
// field may be missing, and a body that is not a JSON object has IsJSON false.
type Envelope struct {
	IsJSON        bool     `json:"-"`
	MessageID     string   `json:"message_id,omitempty"`
	EventType     string   `json:"event_type,omitempty"`
	SchemaVersion string   `json:"schema_version,omitempty"`
	OccurredAt    string   `json:"occurred_at,omitempty"`
	CorrelationID string   `json:"correlation_id,omitempty"`
	Failure       *Failure `json:"failure,omitempty"`
	// TraceID and TraceParent are the envelope's trace_id and traceparent,
	// as written: TraceIDOf validates them (Triaged.TraceID is the result).
	TraceID     string `json:"-"`
	TraceParent string `json:"-"`
}

// EventKind names one kind of step in an attempt timeline.
type EventKind string

const (
	EventPublished  EventKind = "published"   // original publish (timestamp / occurred_at)
	EventDeath      EventKind = "death"       // an x-death entry
	EventFirstDeath EventKind = "first-death" // x-first-death-* headers
	EventLastDeath  EventKind = "last-death"  // x-last-death-* headers (3.13+)
	EventRetry      EventKind = "retry"       // application retry headers
	EventFailure    EventKind = "failure"     // envelope failure block
	EventDelivery   EventKind = "delivery"    // quorum x-delivery-count
	EventReplay     EventKind = "replay"      // dlqt's own replay headers
)

// Event is one step of a message's attempt timeline. Time is zero when the
// source carries no time; such events sort after dated ones.
type Event struct {
	Time   time.Time `json:"time,omitzero"`
	Kind   EventKind `json:"kind"`
	Queue  string    `json:"queue,omitempty"`
	Reason string    `json:"reason,omitempty"`
	Count  int64     `json:"count,omitempty"`
	Detail string    `json:"detail,omitempty"`
}

// Triaged is a message with everything dlqt derived from it. Payload is the
// redacted and sanitised text that may be shown or printed; the raw message
// stays in Message, untouched.
type Triaged struct {
	Message    Message  `json:"-"`
	ID         string   `json:"id"` // stable identity, see Identify
	Envelope   Envelope `json:"envelope"`
	Deaths     []Death  `json:"deaths,omitempty"`
	Reason     Reason   `json:"reason"`
	ReasonCode string   `json:"reason_code"`
	// ExceptionType and ThrownAt are the root cause and its first
	// application frame when ReasonCode is that failure's fingerprint (the
	// message has no code of its own); "" otherwise.
	ExceptionType string    `json:"exception_type,omitempty"`
	ThrownAt      string    `json:"thrown_at,omitempty"`
	Attempts      int       `json:"attempts"`
	DeliveryCount int       `json:"delivery_count,omitempty"` // quorum x-delivery-count
	DiedAt        time.Time `json:"died_at,omitzero"`         // most recent death or failure time
	Timeline      []Event   `json:"timeline"`
	Payload       string    `json:"payload"`
	PayloadBytes  int       `json:"payload_bytes"`
	Binary        bool      `json:"binary,omitempty"` // payload shown as a hex dump
	Redactions    int       `json:"redactions"`       // in the payload
	// Decoding says how a gzip or deflate body was read for the payload
	// (PayloadBytes stays the bytes on the wire); nil when not compressed.
	Decoding *BodyDecoding `json:"body_decoding,omitempty"`
	// TraceID is the distributed trace the message belongs to (TraceIDOf):
	// 16 or 32 lower-case hex digits, "" when it carries none.
	TraceID string `json:"trace_id,omitempty"`
	// TimelineRedactions counts the values masked in the timeline.
	TimelineRedactions int `json:"timeline_redactions,omitempty"`

	// spilled, set on an index entry (Spilled.Index), reads the rest back.
	spilled *Spilled
	// origin is an index entry's original route (OriginalRoute).
	origin *origin
}

// Group is the messages of one queue that share a (reason, reason_code).
type Group struct {
	Reason     Reason `json:"reason"`
	ReasonCode string `json:"reason_code"`
	// ExceptionType and ThrownAt are the first member's, when the code is
	// a failure fingerprint (FaultLabel shows the group with its line).
	ExceptionType string    `json:"exception_type,omitempty"`
	ThrownAt      string    `json:"thrown_at,omitempty"`
	Count         int       `json:"count"`
	Oldest        time.Time `json:"oldest,omitzero"`
	Newest        time.Time `json:"newest,omitzero"`
	EventTypes    []string  `json:"event_types"`
	Members       []int     `json:"-"` // indexes into the Triaged slice that was grouped
}

// Exchange is one exchange of a vhost.
type Exchange struct {
	Name string `json:"name"`
	Type string `json:"type"` // direct, fanout, topic, headers, x-...
	// AlternateExchange takes what the exchange routes nowhere, dead letters
	// included (checked on 3.10.8): argument, else policy; "" = none.
	AlternateExchange string `json:"alternate_exchange,omitempty"`
}

// Binding routes from an exchange to a queue or another exchange.
type Binding struct {
	Source          string  `json:"source"`
	Destination     string  `json:"destination"`
	DestinationType string  `json:"destination_type"` // "queue" or "exchange"
	RoutingKey      string  `json:"routing_key"`
	Arguments       Headers `json:"arguments,omitempty"`
}

// Queue is one queue of a vhost with the effective settings dlqt reasons
// about: each Effective* value is the queue argument, else the policy's.
type Queue struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Messages  int    `json:"messages"`
	Bytes     int64  `json:"bytes,omitempty"` // message bodies held, when the management API says
	Consumers int    `json:"consumers"`
	// Unacked is how many of Messages consumers hold unacked (management
	// statistics, a few seconds old).
	Unacked   int     `json:"unacked,omitempty"`
	Arguments Headers `json:"arguments,omitempty"`
	Policy    string  `json:"policy,omitempty"`

	PublishRate   float64   `json:"publish_rate"`            // msg/s into the queue
	HeadPublished time.Time `json:"head_published,omitzero"` // head_message_timestamp, when known
	// DepthRate is the management API's rate of change of Messages (msg/s,
	// negative while draining): a dead letter does not count in PublishRate
	// on 3.10, but it grows the depth, and the broker has measured that
	// before dlqt's first poll.
	DepthRate float64 `json:"depth_rate,omitempty"`
	// HeldSince is a lower bound on the arrival of the oldest message, from
	// the broker's history of the depth (an hour of it): the depth never
	// fell since then, so what was there then is there now. Zero: unknown.
	HeldSince time.Time `json:"held_since,omitzero"`

	DeadLetterExchange      string `json:"dead_letter_exchange,omitempty"`
	HasDeadLetterExchange   bool   `json:"has_dead_letter_exchange,omitempty"`
	DeadLetterRoutingKey    string `json:"dead_letter_routing_key,omitempty"`
	HasDeadLetterRoutingKey bool   `json:"has_dead_letter_routing_key,omitempty"`
	DLXFromPolicy           bool   `json:"dlx_from_policy,omitempty"`
	MessageTTL              int64  `json:"message_ttl,omitempty"`      // ms; 0 = none
	MaxLength               int64  `json:"max_length,omitempty"`       // 0 = none
	MaxLengthBytes          int64  `json:"max_length_bytes,omitempty"` // 0 = none
	Overflow                string `json:"overflow,omitempty"`
	// DeliveryLimit is the quorum delivery limit set by argument or policy,
	// resolved as the broker does (ResolveDeliveryLimit); 0 = none set unless
	// DeliveryLimitSet. What the queue applies is EffectiveDeliveryLimit:
	// from 4.0 a quorum queue that sets none has a default limit.
	DeliveryLimit    int64 `json:"delivery_limit,omitempty"`
	DeliveryLimitSet bool  `json:"delivery_limit_set,omitempty"`
}

// Ingress is the queue's inflow as the broker measures it: the larger of
// its publish rate and its depth's growth, never negative. The queue list
// of the TUI starts from it and `dlqt queues` prints it.
func (q Queue) Ingress() float64 { return max(q.PublishRate, q.DepthRate, 0) }

// Topology is what dlqt knows of a vhost: enough to find parking queues and
// to tell a broker death from an application publish.
type Topology struct {
	// AppFrames are the config's app_frames globs: the packages that are the
	// operator's own, which say where a failure was thrown (FrameRules).
	// Not part of the broker's topology: the reader that read it adds them.
	AppFrames []string   `json:"-"`
	Vhost     string     `json:"vhost"`
	Queues    []Queue    `json:"queues"`
	Exchanges []Exchange `json:"exchanges"`
	Bindings  []Binding  `json:"bindings"`
	Broker    Broker     `json:"broker,omitzero"` // version and behaviour of the broker it was read from
}

// ParkingQueue is a queue where dead or given-up messages wait for a person.
type ParkingQueue struct {
	Queue
	Vhost            string   `json:"vhost"`
	DeadLetteredFrom []string `json:"dead_lettered_from"` // queues whose DLX routes here
	ByName           bool     `json:"by_name,omitempty"`  // matched only by a name pattern
	// Rule says why it is a parking queue: "dead-lettered from orders.work",
	// or the name pattern that matched ("name *_error (MassTransit)").
	Rule string `json:"rule"`
}

// Batch is what one bounded browse of a queue returned.
type Batch struct {
	Vhost    string    `json:"vhost"`
	Queue    string    `json:"queue"`
	Depth    int       `json:"depth"` // queue depth when the browse started
	Limit    int       `json:"limit"`
	TakenAt  time.Time `json:"taken_at"`
	Messages []Message `json:"messages"`
	// Read counts the messages read when a streamed browse (BrowseOptions.Each)
	// handed them over instead of keeping them in Messages.
	Read int `json:"-"`
	// Bound says why the browse held fewer than the queue's messages when
	// something other than Limit stopped it ("broker memory headroom ...").
	Bound string `json:"bound,omitempty"`
	// Err is set when the browse stopped early; Messages still holds every
	// message read before that, all released back to the queue.
	Err error `json:"-"`
	// Unreadable is the message the browse could not read past, if any;
	// Messages holds the ones before it.
	Unreadable *Unreadable `json:"unreadable,omitempty"`
	// HeldElsewhere is how many messages another reader (a consumer, or
	// another dlqt session's browse) held unacked when this browse began:
	// they are in the queue but not in this batch.
	HeldElsewhere int `json:"held_elsewhere,omitempty"`
	// HeldBy names the connections of the consumers that held them, as
	// the management API lists them (the name each client gave its
	// connection, else the broker's); empty when none is known.
	HeldBy []string `json:"held_by,omitempty"`
}

// Truncated reports whether the batch holds fewer messages than the queue had.
func (b Batch) Truncated() bool { return b.Count() < b.Depth }

// Count is how many messages the browse read, kept or streamed.
func (b Batch) Count() int { return max(len(b.Messages), b.Read) }

// BrowseOptions bound and steer one browse.
type BrowseOptions struct {
	// Limit is at most this many messages; <= 0 means DefaultBrowseLimit,
	// or, for a streamed read (Each), the whole queue. A broker browse
	// holds fewer when more would bring a node near its memory alarm.
	Limit int
	// AcceptDeliveryCost allows browsing a quorum queue whose delivery limit
	// a read counts toward (DeliveryCost.AsksFirst): each read message's
	// delivery count grows by one.
	AcceptDeliveryCost bool
	// Progress, when set, is called as messages arrive (read so far, expected).
	Progress func(read, expected int)
	// Each, when set, takes every message as it is read, in queue order,
	// and the batch keeps none (Batch.Read counts them); an error stops the
	// read, which then releases everything as any stopped browse does.
	// A reader that cannot stream ignores it and fills Messages.
	Each func(Message) error
	// MemoryBudget bounds, in bytes, what a streamed read lets the broker
	// push ahead of the reader; 0 means DefaultMemoryBudget.
	MemoryBudget int64
	// Returning, when set, is told while the read waits, before it begins,
	// for the broker to return n messages of an earlier read (released
	// by a read that has ended, and not yet back in the queue).
	Returning func(n int)
}

// DefaultMemoryBudget is MemoryBudget when none is set.
const DefaultMemoryBudget = 64 << 20

// DefaultBrowseLimit bounds a snapshot when the user sets none.
const DefaultBrowseLimit = 10000

// Reader is what the read path needs from a broker or a snapshot file.
type Reader interface {
	// Describe names the source for the status line, e.g. "127.0.0.1:5672 vhost /".
	Describe() string
	Topology(ctx context.Context) (Topology, error)
	Browse(ctx context.Context, queue string, opts BrowseOptions) (Batch, error)
}
