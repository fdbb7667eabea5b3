package replay

import (
	"context"
	"sync"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// fakeClock is a Clock that moves only when the test advances it. Timers
// and tickers deliver like the real ones: at most one pending tick, and
// Stop or Reset drop a tick not yet received (Go 1.23 timers).
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*fakeTimer
}

type fakeTimer struct {
	c      *fakeClock
	ch     chan time.Time
	at     time.Time
	period time.Duration // a ticker's; 0 for a timer
	active bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer { return c.add(d, 0) }

func (c *fakeClock) NewTicker(d time.Duration) Ticker { return fakeTicker{c.add(d, d)} }

type fakeTicker struct{ *fakeTimer }

func (t fakeTicker) Stop() { t.fakeTimer.Stop() }

func (c *fakeClock) add(d, period time.Duration) *fakeTimer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, ch: make(chan time.Time, 1), at: c.now.Add(d), period: period, active: true}
	c.waiters = append(c.waiters, t)
	t.fireLocked()
	return t
}

// Advance moves time on by d and fires what fell due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for _, t := range c.waiters {
		t.fireLocked()
	}
}

func (t *fakeTimer) fireLocked() {
	if !t.active || t.c.now.Before(t.at) {
		return
	}
	select {
	case t.ch <- t.c.now:
	default:
	}
	if t.period == 0 {
		t.active = false
		return
	}
	for !t.c.now.Before(t.at) {
		t.at = t.at.Add(t.period)
	}
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	t.drain()
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.drain()
	t.at, t.active = t.c.now.Add(d), true
	t.fireLocked()
	return was
}

func (t *fakeTimer) drain() {
	select {
	case <-t.ch:
	default:
	}
}

// fakePort holds every wanted message and answers each publish with the
// broker's answer the test scripted for its item (confirmed by default).
// A scripted answer of nil never comes: the publish awaits its confirm
// until the run's timeout.
type fakePort struct {
	mu      sync.Mutex
	answers map[string]*PublishResult
	// delay holds an item's answer back until this long after its publish
	// on clock (set both).
	delay        map[string]time.Duration
	clock        *fakeClock
	ackErr       error            // every Ack fails with it: the hold channel is gone
	onPublish    []Signal         // sent on Signals with the first publish
	onHold       []Signal         // sent on Signals while holding
	publishErr   map[string]error // Publish fails for these: the copy is not sent
	loadErr      map[string]error // Load fails for these: the held message cannot be read back
	closeSignals bool             // then Signals closes, as amqp091-go closes its notify channels
	gone         map[string]bool  // Hold does not find these
	depthErr     error
	published    []string
	acked        []string
	requeued     []string
	signals      chan Signal
	closed       bool
	// beforePublish, if set, sees each publish just before it is sent: a
	// test stops the world there as a kill -9 would.
	beforePublish func(id string)
	holdTakes     time.Duration // the hold lasts this long on clock
}

func newFakePort() *fakePort {
	return &fakePort{answers: map[string]*PublishResult{}, delay: map[string]time.Duration{}, signals: make(chan Signal, 16)}
}

func (p *fakePort) Hold(_ context.Context, _ string, ids []string, _ string) ([]HeldMessage, error) {
	for _, s := range p.onHold {
		p.signals <- s
	}
	if p.holdTakes > 0 { // while drive advances the clock
		for end := p.clock.Now().Add(p.holdTakes); p.clock.Now().Before(end); {
			time.Sleep(20 * time.Microsecond)
		}
	}
	var out []HeldMessage
	for _, id := range ids {
		if p.gone[id] {
			continue
		}
		out = append(out, HeldMessage{ID: id, BodySHA256: triage.BodySHA256(fakeBody)})
	}
	return out, nil
}

// fakeBody is the body of every message the fake port holds.
var fakeBody = []byte(`{}`)

func (p *fakePort) Load(_ context.Context, id string) (triage.Message, error) {
	if err := p.loadErr[id]; err != nil {
		return triage.Message{}, err
	}
	return triage.Message{Properties: triage.Properties{MessageID: id}, Body: fakeBody}, nil
}

func (p *fakePort) Publish(_ context.Context, pub Publishing) (PendingConfirm, error) {
	if p.beforePublish != nil {
		p.beforePublish(pub.ItemID)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.publishErr[pub.ItemID]; err != nil {
		return nil, err
	}
	p.published = append(p.published, pub.ItemID)
	answer, scripted := p.answers[pub.ItemID]
	if !scripted {
		answer = &PublishResult{Confirmed: true}
	}
	for _, s := range p.onPublish {
		p.signals <- s
	}
	if p.onPublish != nil && p.closeSignals {
		close(p.signals)
	}
	p.onPublish = nil
	f := fakeConfirm{answer: answer}
	if d := p.delay[pub.ItemID]; d > 0 {
		f.clock, f.at = p.clock, p.clock.Now().Add(d)
	}
	return f, nil
}

type fakeConfirm struct {
	answer *PublishResult
	clock  *fakeClock // with at: no answer before then
	at     time.Time
}

func (f fakeConfirm) Wait(ctx context.Context) PublishResult {
	for f.clock != nil && f.clock.Now().Before(f.at) {
		select {
		case <-ctx.Done():
			return PublishResult{Why: "no confirm in time"}
		case <-time.After(50 * time.Microsecond):
		}
	}
	if f.answer == nil {
		<-ctx.Done()
		return PublishResult{Why: "no confirm in time"}
	}
	return *f.answer
}

func (p *fakePort) Ack(_ context.Context, ids []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ackErr != nil {
		return p.ackErr
	}
	p.acked = append(p.acked, ids...)
	return nil
}

func (p *fakePort) Requeue(_ context.Context, ids []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requeued = append(p.requeued, ids...)
	return nil
}

func (p *fakePort) Signals() <-chan Signal { return p.signals }

// clockedPort is a port a test drives: its clock, when it has one, is
// the run's.
type clockedPort interface {
	Port
	fakeClock() *fakeClock
}

func (p *fakePort) fakeClock() *fakeClock { return p.clock }

func (p *fakePort) DestinationDepth(context.Context, []string) (int, error) {
	if p.depthErr != nil {
		return 0, p.depthErr
	}
	return 0, nil
}

func (p *fakePort) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	return nil
}

func (p *fakePort) snapshot() (published, acked, requeued []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.published...), append([]string(nil), p.acked...), append([]string(nil), p.requeued...)
}
