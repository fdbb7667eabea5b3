package broker

import (
	"context"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// openPublishing puts the publishing channel in confirm mode and keeps
// draining its notifications: amqp091-go drops a notification after 5 s on
// a full channel, and a return must never be dropped.
func (r *Replay) openPublishing() error {
	ch, err := r.publish.Channel()
	if err != nil {
		return fmt.Errorf("replay: open publishing channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		return fmt.Errorf("replay: confirm mode: %w", err)
	}
	r.pubCh = ch
	ch.NotifyReturn(r.returns)
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	blocked := r.publish.NotifyBlocked(make(chan amqp.Blocking, 4))
	go func() {
		for {
			select {
			case b, ok := <-blocked:
				if !ok {
					blocked = nil
					continue
				}
				r.setBlocked(b)
			case e, ok := <-closed:
				why := "closed by dlqt"
				if ok && e != nil { // a close we did not ask for: 404 exchange, access, broker gone
					why = e.Reason
					r.signal(replay.Signal{Kind: replay.SignalLost, Reason: "publishing channel closed: " + e.Reason})
				}
				r.losePublishing(why)
				r.setBlocked(amqp.Blocking{Active: false})
				return
			case <-r.done:
				return
			}
		}
	}()
	return nil
}

// losePublishing marks the publishing channel dead: every publish still
// awaiting its confirm ends at once, its fate unknown.
func (r *Replay) losePublishing(why string) {
	r.pubLostOnce.Do(func() {
		r.pubLostWhy = why
		close(r.pubLost)
	})
}

// setBlocked gates Publish: while the broker blocks the connection a write
// would hang, so Publish waits for the unblock (or its context) instead.
func (r *Replay) setBlocked(b amqp.Blocking) {
	r.blockMu.Lock()
	defer r.blockMu.Unlock()
	select {
	case <-r.unblocked:
		if b.Active {
			r.unblocked = make(chan struct{})
			r.signal(replay.Signal{Kind: replay.SignalBlocked, Reason: b.Reason})
		}
	default:
		if !b.Active {
			close(r.unblocked)
			r.signal(replay.Signal{Kind: replay.SignalUnblocked})
		}
	}
}

func (r *Replay) gate() <-chan struct{} {
	r.blockMu.Lock()
	defer r.blockMu.Unlock()
	return r.unblocked
}

// Publish implements replay.Port: mandatory, on the confirm channel,
// with every property of the message as given and every header with the
// field type it was delivered with (see deliveredTable).
func (r *Replay) Publish(ctx context.Context, p replay.Publishing) (replay.PendingConfirm, error) {
	select {
	case <-r.gate():
	case <-ctx.Done():
		return nil, fmt.Errorf("broker blocked publishing: %w", ctx.Err())
	}
	m := p.Message
	pub := amqp.Publishing{
		Headers:         r.deliveredTable(p.ItemID, m.Headers),
		ContentType:     m.Properties.ContentType,
		ContentEncoding: m.Properties.ContentEncoding,
		DeliveryMode:    m.Properties.DeliveryMode,
		Priority:        m.Properties.Priority,
		CorrelationId:   m.Properties.CorrelationID,
		ReplyTo:         m.Properties.ReplyTo,
		Expiration:      m.Properties.Expiration,
		MessageId:       m.Properties.MessageID,
		Timestamp:       m.Properties.Timestamp,
		Type:            m.Properties.Type,
		UserId:          m.Properties.UserID,
		AppId:           m.Properties.AppID,
		Body:            m.Body,
	}
	r.pubMu.Lock()
	dc, err := r.pubCh.PublishWithDeferredConfirmWithContext(ctx, p.Route.Exchange, p.Route.RoutingKey, true, false, pub)
	r.pubMu.Unlock()
	if err != nil {
		return nil, err
	}
	return &pendingConfirm{r: r, id: p.ItemID, dc: dc}, nil
}

type pendingConfirm struct {
	r  *Replay
	id string
	dc *amqp.DeferredConfirmation
}

// Wait implements replay.PendingConfirm. The broker sends a mandatory
// return before the ack of the same publish, and amqp091-go hands it to the
// returns channel before it reads the ack, so draining that channel once the
// confirm is in sees every return of this publish. Returns carry no
// delivery tag: they are matched by dlqt-replay-item (else message_id).
//
// amqp091-go closes the returns channel and nacks every pending confirm when
// the channel dies; a closed channel is never read again (it would spin),
// and a publish whose channel died is reported as unknown, not as a nack.
func (p *pendingConfirm) Wait(ctx context.Context) replay.PublishResult {
	returns := p.r.returns
	for {
		select {
		case ret, ok := <-returns:
			if !ok {
				returns = nil
				continue
			}
			p.r.noteReturn(ret)
		case <-p.dc.Done():
			p.r.drainReturns()
			if why, ok := p.r.takeReturn(p.id); ok {
				return replay.PublishResult{Why: why}
			}
			if p.dc.Acked() {
				return replay.PublishResult{Confirmed: true}
			}
			if lost, ok := p.r.publishingLost(); ok {
				return lostConfirm(lost)
			}
			if p.r.pubCh.IsClosed() {
				// amqp091-go nacks every pending confirm as the channel
				// dies, before its close listeners hear of it.
				return lostConfirm("channel closed")
			}
			return replay.PublishResult{Why: "nacked by the broker"}
		case <-p.r.pubLost:
			return lostConfirm(p.r.pubLostWhy)
		case <-ctx.Done():
			return replay.PublishResult{Why: "no confirm from the broker in time: it may or may not have the copy"}
		}
	}
}

func lostConfirm(why string) replay.PublishResult {
	return replay.PublishResult{Why: "the publishing channel closed before the broker confirmed (" + why + "): it may or may not have the copy", Unknown: true}
}

// publishingLost reports whether the publishing channel died, and why.
func (r *Replay) publishingLost() (string, bool) {
	select {
	case <-r.pubLost:
		return r.pubLostWhy, true
	default:
		return "", false
	}
}

// drainReturns takes in every return already delivered; it stops at a
// closed channel as at an empty one.
func (r *Replay) drainReturns() {
	for {
		select {
		case ret, ok := <-r.returns:
			if !ok {
				return
			}
			r.noteReturn(ret)
		default:
			return
		}
	}
}

func (r *Replay) noteReturn(ret amqp.Return) {
	id, _ := ret.Headers[triage.HeaderReplayItem].(string)
	if id == "" {
		id = ret.MessageId
	}
	r.retMu.Lock()
	r.returned[id] = fmt.Sprintf("returned by the broker: %d %s (exchange %q, routing key %q)", ret.ReplyCode, ret.ReplyText, ret.Exchange, ret.RoutingKey)
	r.retMu.Unlock()
}

func (r *Replay) takeReturn(id string) (string, bool) {
	r.retMu.Lock()
	defer r.retMu.Unlock()
	why, ok := r.returned[id]
	delete(r.returned, id)
	return why, ok
}
