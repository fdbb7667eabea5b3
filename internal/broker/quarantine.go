package broker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// amqp091-go v1.16.0 refuses a field table nested deeper than 32 (the
// headers table itself is level 0) or holding more than 8,192 entries, and
// answers such a frame by closing the whole connection with a syntax error
// (read.go: maxFieldDepth, maxContainerElements). The management API renders
// the same headers as JSON, so dlqt finds and saves such a message there.
const (
	clientMaxDepth   = 32
	clientMaxEntries = 8192
)

// isDecodeFailure reports whether err is amqp091-go giving up on a frame it
// received (not a broker close): the mark of an unreadable message.
func isDecodeFailure(err error) bool {
	var ae *amqp.Error
	if !errors.As(err, &ae) {
		return false
	}
	if ae.Server {
		return false
	}
	// amqp091-go reports every failed read as a FrameError, a connection
	// reset by a dying node too: only its parse errors name a message.
	return ae.Code == amqp.SyntaxError || ae.Code == amqp.FrameError &&
		(strings.Contains(ae.Reason, amqp.ErrSyntax.Reason) || strings.Contains(ae.Reason, amqp.ErrFrame.Reason))
}

// nameUnreadable makes a decode failure say what it means and the way past
// it; a sweep or a hold that meets one then fails with a line the user can
// act on. Other errors pass unchanged.
func nameUnreadable(err error, queue string) error {
	if !isDecodeFailure(err) {
		return err
	}
	return fmt.Errorf("a message in %q has headers the AMQP client cannot decode, which drops the connection "+
		"(dlqt messages names its position; dlqt quarantine sets it aside): %w", queue, err)
}

// RawMessage is one message as the management API's get returns it, payload
// in base64: kept byte for byte, so a quarantine file holds exactly what
// the queue held.
type RawMessage struct {
	JSON json.RawMessage
	info rawInfo
}

type rawInfo struct {
	Properties struct {
		MessageID string         `json:"message_id"`
		Headers   map[string]any `json:"headers"`
	} `json:"properties"`
	Payload         string `json:"payload"`
	PayloadEncoding string `json:"payload_encoding"`
}

// MessageID is the message's message_id property, if any.
func (r RawMessage) MessageID() string { return r.info.Properties.MessageID }

// Digest is the SHA-256 of the message, hex, over a canonical form without
// what changes between two reads of the same message: message_count (what
// is left behind it), redelivered, and the x-delivery-count header a quorum
// queue adds. Numbers stay exact (json.Number).
func (r RawMessage) Digest() string {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.JSON))
	dec.UseNumber()
	if dec.Decode(&m) != nil {
		sum := sha256.Sum256(r.JSON)
		return hex.EncodeToString(sum[:])
	}
	delete(m, "message_count")
	delete(m, "redelivered")
	if props, ok := m["properties"].(map[string]any); ok {
		if h, ok := props["headers"].(map[string]any); ok {
			delete(h, "x-delivery-count")
		}
	}
	canon, _ := json.Marshal(m) // map keys sorted: canonical
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// Undecodable says why amqp091-go cannot read this message, or "" if it can.
func (r RawMessage) Undecodable() string {
	depth, entries := measure(r.info.Properties.Headers, 0)
	switch {
	case depth > clientMaxDepth:
		return fmt.Sprintf("headers nested %d deep (the AMQP client reads at most %d)", depth, clientMaxDepth)
	case entries > clientMaxEntries:
		return fmt.Sprintf("a header table or array with %d entries (the AMQP client reads at most %d)", entries, clientMaxEntries)
	}
	return ""
}

// measure returns the deepest level of a container below v (v at level) and
// the largest container's length.
func measure(v any, level int) (depth, widest int) {
	depth = level
	visit := func(child any) {
		d, w := measure(child, level+1)
		depth, widest = max(depth, d), max(widest, w)
	}
	switch c := v.(type) {
	case map[string]any:
		widest = len(c)
		for _, child := range c {
			if isContainer(child) {
				visit(child)
			}
		}
	case []any:
		widest = len(c)
		for _, child := range c {
			if isContainer(child) {
				visit(child)
			}
		}
	}
	return depth, widest
}

func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// getRaw takes up to count messages from the head of queue through the
// management API. ackmode ack_requeue_true puts them back in place (a
// classic queue keeps order); ack_requeue_false removes them.
func (l *Live) getRaw(ctx context.Context, queue string, count int, ackmode string) ([]RawMessage, error) {
	path := "queues/" + url.PathEscape(l.cfg.Vhost) + "/" + url.PathEscape(queue) + "/get"
	body, _ := json.Marshal(map[string]any{"count": count, "ackmode": ackmode, "encoding": "base64"})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.mgmt.endpoint+"/api/"+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := l.mgmt.http.Do(req)
	if err != nil {
		return nil, l.mgmt.explain(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("management API POST %s: %w", req.URL, err)
	}
	if res.StatusCode >= 300 {
		return nil, fmt.Errorf("management API POST %s: %s: %.200s", req.URL, res.Status, data)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("management API POST %s: bad answer: %v", req.URL, err)
	}
	out := make([]RawMessage, len(list))
	for i, m := range list {
		out[i].JSON = m
		if err := json.Unmarshal(m, &out[i].info); err != nil {
			return nil, fmt.Errorf("management API POST %s: bad message: %v", req.URL, err)
		}
	}
	return out, nil
}

// PeekRaw returns the message at position (from 0) of queue, read through
// the management API and put back: the one way to see a message the AMQP
// client cannot decode. It costs what a browse of position+1 messages costs.
func (l *Live) PeekRaw(ctx context.Context, queue string, position int) (RawMessage, error) {
	msgs, err := l.getRaw(ctx, queue, position+1, "ack_requeue_true")
	if err != nil {
		return RawMessage{}, err
	}
	if len(msgs) <= position {
		return RawMessage{}, fmt.Errorf("queue %q holds %d ready messages, none at position %d", queue, len(msgs), position)
	}
	return msgs[position], nil
}

// findUnreadable reads the head of queue through the management API, up to
// limit messages, and returns the first one the AMQP client cannot decode.
func (l *Live) findUnreadable(ctx context.Context, queue string, limit int) (*triage.Unreadable, error) {
	msgs, err := l.getRaw(ctx, queue, limit, "ack_requeue_true")
	if err != nil {
		return nil, err
	}
	for i, m := range msgs {
		if why := m.Undecodable(); why != "" {
			return &triage.Unreadable{Position: i, MessageID: m.MessageID(), Reason: why}, nil
		}
	}
	return nil, nil
}

// RemoveAt takes the message at position of queue out for good, only if it
// is still the one saved (same digest). The management API's get removes
// only the head, so the messages before it are held unacked on an AMQP
// channel with a prefetch of exactly position (the broker pushes nothing
// past them), the head is checked, then taken, and the held messages are
// released back to their places. It returns the message removed.
func (l *Live) RemoveAt(ctx context.Context, queue string, position int, want RawMessage) (RawMessage, error) {
	l.released.forget(queue) // one message taken out (returning.go)
	if position < 0 || position >= maxHoldPrefetch {
		return RawMessage{}, fmt.Errorf("position %d: dlqt can set aside only messages among the first %d", position, maxHoldPrefetch)
	}
	if position > 0 {
		conn, err := l.connection(ctx)
		if err != nil {
			return RawMessage{}, err
		}
		q, _, err := l.queueInfo(ctx, queue)
		if err != nil {
			return RawMessage{}, err
		}
		depth, err := passiveDepth(conn, queue, l.cfg.Vhost)
		if err != nil {
			return RawMessage{}, err
		}
		r := reading{queue: queue, want: position, expected: position, owed: l.owedRule(conn, q, depth)}
		h, err := r.hold(ctx, conn)
		if err != nil {
			return RawMessage{}, err
		}
		defer func() {
			_ = r.release(h) // on failure the close below requeues them
			h.ch.Close()
		}()
		if h.stopErr != nil || len(h.msgs) != position {
			return RawMessage{}, fmt.Errorf("could hold only %d of the %d messages before position %d; nothing removed: %v",
				len(h.msgs), position, position, h.stopErr)
		}
	}
	head, err := l.getRaw(ctx, queue, 1, "ack_requeue_true")
	if err != nil {
		return RawMessage{}, err
	}
	if len(head) != 1 || head[0].Digest() != want.Digest() {
		return RawMessage{}, fmt.Errorf("the message at position %d of %q is no longer the one saved; nothing removed", position, queue)
	}
	taken, err := l.getRaw(ctx, queue, 1, "ack_requeue_false")
	if err != nil {
		return RawMessage{}, err
	}
	if len(taken) != 1 {
		return RawMessage{}, fmt.Errorf("the message at position %d of %q went away before it was removed", position, queue)
	}
	if taken[0].Digest() != want.Digest() {
		return taken[0], fmt.Errorf("removed a different message than the one saved at position %d of %q (another consumer?)", position, queue)
	}
	return taken[0], nil
}

// maxHoldPrefetch is the largest prefetch basic.qos takes.
const maxHoldPrefetch = 65535

// readPastUnreadable turns a browse that an undecodable message stopped into
// the messages before it plus a placeholder naming it. Which deliveries
// amqp091-go handed over before it dropped the connection is a race, so the
// position comes from the management API, and the messages before it are
// read again with a prefetch that stops the broker short of it.
//
// Only a classic queue puts requeued messages back in their places (a 3.10
// quorum queue was seen returning them out of order), so only there does a
// position mean anything; other queues get the error, which names the cause.
func (l *Live) readPastUnreadable(ctx context.Context, b triage.Batch, r reading, readErr error, classic bool) (triage.Batch, error) {
	if !classic {
		return finish(b, readErr)
	}
	// The broker returns the dropped connection's deliveries on its own
	// time; a get before that would miss them and misplace the message.
	l.waitReady(ctx, r.queue, b.Depth)
	u, err := l.findUnreadable(ctx, r.queue, r.want)
	if err != nil || u == nil {
		return finish(b, readErr)
	}
	handed := b.Read // a streamed browse handed these over already, in order
	b.Messages, b.Read = nil, 0
	if u.Position > 0 {
		conn, err := l.connection(ctx)
		if err != nil {
			return finish(b, err)
		}
		before := reading{queue: r.queue, want: u.Position, expected: u.Position, progress: r.progress, owed: r.owed.on(conn)}
		if each := r.each; each != nil {
			before.each = func(m triage.Message) error {
				if m.Position < handed {
					return nil
				}
				return each(m)
			}
		}
		if b.Messages, b.Read, err = before.read(ctx, conn); err != nil {
			return finish(b, err)
		}
	}
	b.Unreadable = u
	return b, nil
}

// CanSetAside refuses a queue where a message cannot be taken out by
// position: only a classic queue keeps requeued messages in their places,
// which PeekRaw and RemoveAt rely on (they requeue what they read).
func (l *Live) CanSetAside(ctx context.Context, queue string) error {
	q, _, err := l.queueInfo(ctx, queue)
	if err != nil {
		return err
	}
	if t := q.Type; t != triage.QueueClassic {
		return fmt.Errorf("%q is a %s queue: it does not keep requeued messages in their places, so dlqt cannot take out exactly one message by position", queue, t)
	}
	return nil
}

// waitReady waits, up to releaseWait, until queue has at least want ready
// messages again.
func (l *Live) waitReady(ctx context.Context, queue string, want int) {
	deadline := time.Now().Add(releaseWait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		conn, err := l.connection(ctx)
		if err != nil {
			return
		}
		if n, err := passiveDepth(conn, queue, l.cfg.Vhost); err != nil || n >= want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
