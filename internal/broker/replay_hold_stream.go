package broker

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/dlqt/dlqt/internal/triage/replay"
)

// How a streamed hold hands what it reads to the replay: in batches of up
// to streamBatch, or whatever it has when the broker has nothing more
// pushed yet.
const streamBatch = 256

// holdStream is a hold whose read goes on in a goroutine of its own while
// the replay publishes what it has held so far (HoldStream).
type holdStream struct {
	stop context.CancelFunc
	done chan struct{} // closed once the read's goroutine has ended
}

var _ replay.HoldStreamer = (*Replay)(nil)

// HoldStream implements replay.HoldStreamer. It begins the hold as Hold
// does, and on a classic queue returns as soon as the read is under way:
// each selected message comes on the channel as soon as it is read and
// stored, in queue order, and the channel closes once the read has ended
// (its last batch says why, if it ended short of what it was to read).
// A message whose id was read before in the same hold is named, as Hold
// names every message, once the whole read is in.
//
// A quorum queue, or any queue whose messages pay a delivery to be held,
// is held whole first, as Hold does, and sent as one batch: its hold may
// be refused once read (refuseAtLimit), and nothing may have been
// published from it by then.
func (r *Replay) HoldStream(ctx context.Context, queue string, ids []string, replayID string) (<-chan replay.HeldBatch, error) {
	hr, err := r.beginHold(ctx, queue, ids, replayID)
	if err != nil {
		return nil, err
	}
	out := make(chan replay.HeldBatch, 16)
	if hr == nil || hr.quorum || hr.cost.Limited {
		var held []replay.HeldMessage
		if hr != nil {
			if held, err = r.holdRest(ctx, hr); err != nil {
				return nil, err
			}
		}
		out <- replay.HeldBatch{Held: held}
		close(out)
		return out, nil
	}
	sctx, stop := context.WithCancel(ctx)
	st := &holdStream{stop: stop, done: make(chan struct{})}
	r.stream = st
	so := &streamOut{r: r, p: hr.pass, out: out, ctx: sctx, last: time.Now()}
	hr.pass.stream = so
	go func() {
		defer close(st.done)
		defer close(out)
		so.end(r.streamRest(sctx, hr))
	}()
	return out, nil
}

var _ replay.HoldSelector = (*Replay)(nil)

// HoldSelecting implements replay.HoldSelector: a streamed hold (HoldStream)
// of what choose takes as the hold reads, the first message of each id
// (triage.FirstSeen): a later one with the id of one read before is read
// past and stays in the queue, as every message choose does not take.
func (r *Replay) HoldSelecting(ctx context.Context, queue string, choose replay.Chooser, replayID string) (<-chan replay.HeldBatch, error) {
	if choose == nil {
		return nil, fmt.Errorf("replay %s: a selecting hold needs its selection", r.replayID)
	}
	r.choose = choose
	return r.HoldStream(ctx, queue, nil, replayID)
}

// streamRest reads the hold through, then names what the read could not
// name as it went. An error leaves what it held held: the replay settles
// it, and the release gives back the rest.
func (r *Replay) streamRest(ctx context.Context, hr *holdRead) error {
	short, err := r.consumeAll(ctx, hr.w, hr.owed, hr.want, hr.pass)
	if err == nil {
		err = hr.pass.err
	}
	if err != nil {
		timeout := make(chan struct{})
		t := time.AfterFunc(releaseWait, func() { close(timeout) })
		defer t.Stop()
		_, _ = hr.w.cancel(timeout) // not sorted: released with the rest
		return err
	}
	if err := r.endHoldRead(hr, short); err != nil {
		return err
	}
	r.noteRepeats(hr.pass)
	s := hr.pass.stream
	s.batch = append(s.batch, r.sortHeld(hr.pass)...)
	r.held.readEnded() // every message it holds is named: the runs not selected may go back
	return nil
}

// StopHold implements replay.HoldStreamer: a streamed hold's read stops
// and its consumers are cancelled. What it held stays held until it is
// settled or released.
func (r *Replay) StopHold() {
	if st := r.stream; st != nil {
		st.stop()
		<-st.done
	}
}

// streamOut reports a streamed hold's messages as they are read: each
// selected one the first time its id is read, registered as held before it
// is reported (Load and Ack find it), and this replay's copies.
type streamOut struct {
	r     *Replay
	p     *passing
	out   chan<- replay.HeldBatch
	ctx   context.Context // the hold's: once it ends nobody listens
	at    []uint64        // positions reported, a bit each (the ids: passing.streamed)
	own   int             // messages read that are not copies of this replay
	batch []replay.HeldMessage
	last  time.Time // of the last batch sent
}

// took reports what the read took at position i, if it is to be.
func (s *streamOut) took(i int, base string) {
	p := s.p
	if item, copied := p.copies[i]; copied {
		s.mark(i)
		s.batch = append(s.batch, replay.HeldMessage{ID: item, Copy: true})
		return
	}
	n := s.own
	s.own++
	sum, stored := p.sums[i]
	k, want := p.want.place(base)
	if !stored || !want || p.want.kind[k]&selectedID == 0 || p.streamed.has(uint64(k)) {
		return // not selected, or a second with its id: named at the end
	}
	s.mark(i)
	p.streamed.add(uint64(k))
	h := s.r.held
	h.mu.Lock()
	h.hold(base, p.tags[i], heldAt{record: int32(i), position: int32(n)})
	h.mu.Unlock()
	s.batch = append(s.batch, replay.HeldMessage{ID: base, BodySHA256: hex.EncodeToString(sum[:])})
	delete(p.sums, i) // reported: the end of the read does not look at it again
}

// flush sends the batch when it is full, or, with idle (nothing more has
// been pushed yet), when it has waited a little.
func (s *streamOut) flush(idle bool) {
	if s == nil || len(s.batch) == 0 {
		return
	}
	if len(s.batch) < streamBatch && !(idle && time.Since(s.last) >= 20*time.Millisecond) {
		return
	}
	s.send(replay.HeldBatch{Held: s.batch})
	s.batch = nil
}

func (s *streamOut) send(b replay.HeldBatch) {
	s.last = time.Now()
	select {
	case s.out <- b:
	case <-s.ctx.Done():
	}
}

// end sends what is left, and why the read ended short, if it did.
func (s *streamOut) end(err error) {
	s.send(replay.HeldBatch{Held: s.batch, Err: err})
	s.batch = nil
}

func (s *streamOut) mark(i int) {
	for len(s.at) <= i/64 {
		s.at = append(s.at, 0)
	}
	s.at[i/64] |= 1 << (i % 64)
}

func (s *streamOut) reported(i int) bool {
	return s != nil && i/64 < len(s.at) && s.at[i/64]&(1<<(i%64)) != 0
}

func (s *streamOut) reportedID(id string) bool {
	if s == nil {
		return false
	}
	k, ok := s.p.want.place(id)
	return ok && s.p.streamed.has(uint64(k))
}
