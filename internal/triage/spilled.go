package triage

import (
	"fmt"
	"unsafe"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

// A browse of a whole queue keeps each message in two parts: the whole of
// it in a store on disk (package spill, through Bodies), and in memory an
// index entry, a Triaged without body, headers, payload or timeline but
// with everything groups, lists and the non-text filter fields read.
// Whatever needs the rest (the message screen, an edit, a text~ filter, a
// replay plan) asks the entry for its Whole, which reads the message back
// and derives it again, with the same identity.

// Bodies is where a browse put its whole messages, by Message.Position.
type Bodies interface {
	Message(pos int) (Message, error)
}

// Spilled re-derives the index entries of one browse from their whole
// messages, as the streamed inspection derived them.
type Spilled struct {
	bodies Bodies
	r      *router
	red    *redact.Redactor
	common interner // owned by the goroutine that calls Index
	// origins are the original routes of the entries, shared (originOf);
	// owned by the goroutine that calls Index.
	origins map[origin]*origin
}

// NewSpilled reads back from bodies, deriving with red and the browse's
// topology (UseTopology, which a stream learns only at its end: entries
// are indexed before, read back after).
func NewSpilled(bodies Bodies, red *redact.Redactor) *Spilled {
	return &Spilled{bodies: bodies, red: red, r: newRouter(Topology{})}
}

// UseTopology is the topology the browse classified with; call it before
// any entry is read back.
func (s *Spilled) UseTopology(top Topology) { s.r = newRouter(top) }

// indexHeaders are the headers an index entry keeps: DiedIn reads
// x-first-death-queue when no x-death names a queue.
var indexHeaders = []string{"x-first-death-queue"}

// Index is t as the index keeps it: no body, headers (but the few the
// index reads), payload or timeline, and a way back to them.
func (s *Spilled) Index(t Triaged) Triaged {
	var kept Headers
	for _, k := range indexHeaders {
		if v, ok := t.Message.Headers[k]; ok && (len(t.Deaths) == 0 || t.Deaths[0].Queue == "") {
			if kept == nil {
				kept = Headers{}
			}
			kept[k] = v
		}
	}
	t.origin = s.originOf(t)
	t.Message.Body, t.Message.Headers = nil, kept
	t.Payload, t.Timeline = "", nil
	t.spilled = s
	s.common.entry(&t)
	return t
}

// interner shares the strings a queue's messages mostly have in common
// (exchange, routing key, content type, event type, reason code, the
// queues of their deaths…): decoded from each message, each would be a
// copy of its own, a few hundred bytes an entry in all. Only the first
// maxInterned distinct values are shared, so a field that is unique per
// message (an id, a time) costs the map nothing past that.
type interner map[string]string

const maxInterned = 4096

func (in *interner) str(s *string) {
	if *s == "" {
		return
	}
	if *in == nil {
		*in = interner{}
	}
	if v, ok := (*in)[*s]; ok {
		*s = v
		return
	}
	if len(*in) < maxInterned {
		(*in)[*s] = *s
	}
}

func (in *interner) entry(t *Triaged) {
	m, p, e := &t.Message, &t.Message.Properties, &t.Envelope
	for _, s := range []*string{&m.Queue, &m.Exchange, &m.RoutingKey, &p.ContentType, &p.ContentEncoding,
		&p.Type, &p.AppID, &p.UserID, &p.ReplyTo, &e.EventType, &e.SchemaVersion, &t.ReasonCode,
		&t.ExceptionType, &t.ThrownAt} {
		in.str(s)
	}
	if e.MessageID == p.MessageID {
		e.MessageID = p.MessageID
	}
	if e.CorrelationID == p.CorrelationID {
		e.CorrelationID = p.CorrelationID
	}
	if f := e.Failure; f != nil {
		in.str(&f.ReasonCode)
		in.str(&f.Consumer)
		in.str(&f.ConsumerVersion)
	}
	for i := range t.Deaths {
		d := &t.Deaths[i]
		in.str(&d.Queue)
		in.str(&d.Exchange)
		in.str((*string)(&d.Reason))
		in.str(&d.OriginalExpiration)
		for j := range d.RoutingKeys {
			in.str(&d.RoutingKeys[j])
		}
	}
}

// Indexed reports an index entry: its body, headers, payload and timeline
// are on disk (Whole reads them).
func (t Triaged) Indexed() bool { return t.spilled != nil }

// Whole is t with its whole message read back and everything derived from
// it again (same ID); t itself when it is not an index entry.
func (t Triaged) Whole() (Triaged, error) {
	s := t.spilled
	if s == nil {
		return t, nil
	}
	m, err := s.bodies.Message(t.Message.Position)
	if err != nil {
		return t, fmt.Errorf("reading back message %s: %w", t.ID, err)
	}
	return analyzeOne(s.r, m, EnvelopeOf(m), t.ID, s.red, true), nil
}

// WithMessage is t with its whole message (body and headers) read back
// and nothing derived again: what a replay plan routes by, at a fraction
// of Whole's cost. It stays an index entry (Whole still works).
func (t Triaged) WithMessage() (Triaged, error) {
	if t.spilled == nil {
		return t, nil
	}
	m, err := t.spilled.bodies.Message(t.Message.Position)
	if err != nil {
		return t, fmt.Errorf("reading back message %s: %w", t.ID, err)
	}
	t.Message = m
	return t, nil
}

// HeadReader is Bodies that can read a message back without its body.
type HeadReader interface {
	MessageHead(pos int) (Message, error)
}

// WithHeaders is WithMessage without the body when the store can leave it
// out (HeadReader): what routing reads, at the cost of the headers alone.
func (t Triaged) WithHeaders() (Triaged, error) {
	hr, ok := t.spilled.bodiesOrNil().(HeadReader)
	if !ok {
		return t.WithMessage()
	}
	m, err := hr.MessageHead(t.Message.Position)
	if err != nil {
		return t, fmt.Errorf("reading back message %s: %w", t.ID, err)
	}
	t.Message = m
	return t, nil
}

func (s *Spilled) bodiesOrNil() Bodies {
	if s == nil {
		return nil
	}
	return s.bodies
}

// IndexCost is about what an index entry holds in memory, in bytes: the
// struct, the strings and slices it points to, and its place in a group.
func IndexCost(t *Triaged) int64 {
	n := int(unsafe.Sizeof(*t)) + 8 // + its index in Group.Members
	p := &t.Message.Properties
	n += len(t.ID) + len(t.Message.Exchange) + len(t.Message.RoutingKey) + len(t.ReasonCode) +
		len(t.ExceptionType) + len(t.ThrownAt) +
		len(p.MessageID) + len(p.CorrelationID) + len(p.ContentType) + len(p.ContentEncoding) + len(p.Type) +
		len(p.AppID) + len(p.UserID) + len(p.ReplyTo) + len(p.Expiration)
	e := &t.Envelope
	n += len(e.MessageID) + len(e.EventType) + len(e.SchemaVersion) + len(e.OccurredAt) + len(e.CorrelationID)
	if f := e.Failure; f != nil {
		n += int(unsafe.Sizeof(*f)) + len(f.ReasonCode) + len(f.Consumer) + len(f.ConsumerVersion) +
			len(f.FirstFailedAt) + len(f.LastFailedAt)
	}
	for _, d := range t.Deaths {
		n += int(unsafe.Sizeof(d)) + len(d.Queue) + len(d.Exchange) + len(d.OriginalExpiration)
		for _, k := range d.RoutingKeys {
			n += 16 + len(k)
		}
	}
	n += len(t.Message.Headers) * 64
	return int64(n)
}
