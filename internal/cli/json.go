package cli

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/doctor"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// The JSON output of the headless commands (--json) is a contract with
// scripts: the field names, and that a list is [] and never null, stay put.

// QueueRow is one element of `dlqt queues --json`.
type QueueRow struct {
	Vhost            string   `json:"vhost"`
	Name             string   `json:"name"`
	Type             string   `json:"type"`
	Messages         int      `json:"messages"`
	Parking          bool     `json:"parking"`
	DeadLetteredFrom []string `json:"dead_lettered_from"`
	// Rule says why a parking queue is one (its dead-letter route, or the
	// name pattern that matched); "" for other queues.
	Rule        string  `json:"rule"`
	PublishRate float64 `json:"publish_rate"`
	// IngressRate is the inflow the TUI's queue list starts from: the larger
	// of the publish rate and the depth's growth (dead letters count only
	// there on 3.10). RATE/s in the table.
	IngressRate float64 `json:"ingress_rate"`
	// BrokerVersion is the RabbitMQ version the row was read from, on every
	// row so the output stays an array of rows; absent when unknown.
	BrokerVersion string `json:"broker_version,omitempty"`
}

// queueRows lists every queue of the topology by name, parking ones marked
// with the queues that dead-letter into them.
func queueRows(top triage.Topology, parking []triage.ParkingQueue) []QueueRow {
	byName := map[string]triage.ParkingQueue{}
	for _, p := range parking {
		byName[p.Name] = p
	}
	rows := make([]QueueRow, 0, len(top.Queues))
	for _, q := range top.Queues {
		p, isParking := byName[q.Name]
		from := []string{}
		if isParking && p.DeadLetteredFrom != nil {
			from = sanitize.Lines(p.DeadLetteredFrom)
		}
		rows = append(rows, QueueRow{
			Vhost: sanitize.Line(top.Vhost), Name: sanitize.Line(q.Name), Type: q.Type,
			Messages: q.Messages, Parking: isParking, DeadLetteredFrom: from, Rule: sanitize.Line(p.Rule), PublishRate: q.PublishRate,
			IngressRate:   q.Ingress(),
			BrokerVersion: top.Broker.Version.String(),
		})
	}
	slices.SortFunc(rows, func(a, b QueueRow) int { return strings.Compare(a.Name, b.Name) })
	return rows
}

// GroupRow is one element of `dlqt groups QUEUE --json`.
type GroupRow struct {
	Reason     string `json:"reason"`
	ReasonCode string `json:"reason_code"`
	// ExceptionType and ThrownAt are the root-cause exception and its first
	// application frame (function:line, the first message's) when the
	// reason code is a failure fingerprint; "" otherwise.
	ExceptionType string   `json:"exception_type"`
	ThrownAt      string   `json:"thrown_at"`
	Count         int      `json:"count"`
	Oldest        *string  `json:"oldest"`
	Newest        *string  `json:"newest"`
	EventTypes    []string `json:"event_types"`
	// Owner is the team (or teams, comma-separated) the owners section of
	// the config gives the group's messages to; "" when none.
	Owner string `json:"owner"`
}

// groupRows shows a group's ages as RFC 3339 UTC, null when unknown, and
// the owner of each group of queue; its reason code and event types are
// the senders' text, redacted (the owner is matched on them as they are).
func groupRows(queue string, gs []triage.Group, owners approval.Owners, red *redact.Redactor) []GroupRow {
	rows := make([]GroupRow, 0, len(gs))
	for _, g := range gs {
		types := make([]string, len(g.EventTypes))
		for i, et := range g.EventTypes {
			types[i] = shownText(red, et)
		}
		rows = append(rows, GroupRow{
			Reason: shownText(red, string(g.Reason)), ReasonCode: shownText(red, g.ReasonCode), Count: g.Count,
			ExceptionType: shownText(red, g.ExceptionType), ThrownAt: shownText(red, g.ThrownAt),
			Oldest: rfc3339(g.Oldest), Newest: rfc3339(g.Newest), EventTypes: types,
			Owner: owners.OfGroup(queue, g),
		})
	}
	return rows
}

// MessageRow is one line of `dlqt messages QUEUE --json`.
type MessageRow struct {
	ID         string `json:"id"`
	Reason     string `json:"reason"`
	ReasonCode string `json:"reason_code"`
	// ExceptionType and ThrownAt: see GroupRow.
	ExceptionType string `json:"exception_type"`
	ThrownAt      string `json:"thrown_at"`
	EventType     string `json:"event_type"`
	// TraceID is the trace the message belongs to (traceparent, B3,
	// uber-trace-id or the envelope's): validated hex, omitted when none.
	TraceID      string         `json:"trace_id,omitempty"`
	Attempts     int            `json:"attempts"`
	Timeline     []triage.Event `json:"timeline"`
	Headers      triage.Headers `json:"headers"`
	Payload      string         `json:"payload"`
	PayloadBytes int            `json:"payload_bytes"`
	Redactions   int            `json:"redactions"`
	// BodyDecoding says how a gzip or deflate body was read for the payload
	// (payload_bytes are the bytes on the wire): sizes, a limit that stopped
	// it, or why it could not be read.
	BodyDecoding *triage.BodyDecoding `json:"body_decoding,omitempty"`
	// Discarded is set when the journal says this message was discarded.
	Discarded *DiscardedNote `json:"discarded,omitempty"`
	// InterruptedDiscard is set when a discard selected this message but
	// never journaled its outcome (dlqt was killed during it): still here.
	InterruptedDiscard *DiscardedNote `json:"interrupted_discard,omitempty"`
}

// messageRow carries the redacted payload, headers, timeline (triage
// redacted it), reason code and event type; Redactions counts them all.
func messageRow(t triage.Triaged, red *redact.Redactor) MessageRow {
	headers, n := redact.Headers(t.Message.Headers, red)
	if headers == nil {
		headers = triage.Headers{}
	}
	timeline := t.Timeline
	if timeline == nil {
		timeline = []triage.Event{}
	}
	reason, r := triage.ShownLine(red, string(t.Reason)) // x-death's text: a client may have written it
	code, c := triage.ShownLine(red, t.ReasonCode)
	event, e := triage.ShownLine(red, t.Envelope.EventType)
	trace, tr := triage.ShownLine(red, t.TraceID)
	exception, x := triage.ShownLine(red, t.ExceptionType)
	at, w := triage.ShownLine(red, t.ThrownAt)
	return MessageRow{
		ID: t.ID, Reason: reason, ReasonCode: code, EventType: event, ExceptionType: exception, ThrownAt: at, TraceID: trace,
		Attempts: t.Attempts, Timeline: timeline, Headers: headers,
		Payload: t.Payload, PayloadBytes: t.PayloadBytes, BodyDecoding: t.Decoding,
		Redactions: t.Redactions + t.TimelineRedactions + n + r + c + e + tr + x + w,
	}
}

// shownText is a short broker string as the headless commands print it:
// redacted and sanitised (triage.ShownLine).
func shownText(red *redact.Redactor, s string) string {
	text, _ := triage.ShownLine(red, s)
	return text
}

func rfc3339(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// writeJSON writes v indented, with <, > and & as they are.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeMessageLines writes one MessageRow per line (JSON Lines), so a script
// can stream a large queue.
func writeMessageLines(w io.Writer, ms []triage.Triaged, red *redact.Redactor, marks discardMarks) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range ms {
		row := messageRow(ms[i], red)
		if seq, ok := marks.discarded[row.ID]; ok {
			row.Discarded = discardedNote(seq, marks.queue)
		}
		if seq, ok := marks.interrupted[row.ID]; ok {
			row.InterruptedDiscard = interruptedNote(seq)
		}
		if err := enc.Encode(row); err != nil {
			return err
		}
	}
	return nil
}

// writeFindingsJSON writes the doctor's findings, [] when there are none.
func writeFindingsJSON(w io.Writer, fs []doctor.Finding) error {
	if fs == nil {
		fs = []doctor.Finding{}
	}
	return writeJSON(w, fs)
}
