package broker

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/spill"
)

// heldStore keeps the deliveries a replay holds on disk until they are
// published, so a replay of a whole group holds in memory a few dozen
// bytes a message, not its body and two copies of its headers (about 4
// KB a 1 KiB message: a hold of 100,000 peaked at 730 MiB, and the
// collector, kept under the soft memory limit, took 60% of the CPU).
//
// The file is the user's cache directory's (mode 0600), and is unlinked as
// soon as it is opened: what it holds are the messages as they are, secrets
// included, and nothing of them stays on disk once dlqt exits, however it
// exits. Records are appended through a buffer and read back by offset.
type heldStore struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	end  int64 // bytes appended, buffered ones included
	at   map[int]span
	buf  []byte
	werr error
}

type span struct {
	off int64
	n   int
}

func newHeldStore() (*heldStore, error) {
	dir, err := spill.Dir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("replay: hold store: %w", err)
	}
	f, err := os.CreateTemp(dir, "hold-*.bin") // 0600
	if err != nil {
		return nil, fmt.Errorf("replay: hold store: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("replay: hold store: %w", err)
	}
	return &heldStore{f: f, w: bufio.NewWriterSize(f, 1<<20), at: map[int]span{}}, nil
}

// put writes delivery d under pos and returns the SHA-256 of its body.
func (s *heldStore) put(pos int, d amqp.Delivery) ([32]byte, error) {
	sum := sha256.Sum256(d.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.werr != nil {
		return sum, s.werr
	}
	head, err := appendDeliveryHead(s.buf[:0], d)
	if err != nil {
		return sum, err
	}
	s.buf = head
	// The body is written as it is, never copied: a hold of one 128 MiB
	// message costs no second 128 MiB.
	for _, b := range [][]byte{head, d.Body} {
		if _, err := s.w.Write(b); err != nil {
			s.werr = fmt.Errorf("replay: hold store: %w", err)
			return sum, s.werr
		}
	}
	n := len(head) + len(d.Body)
	s.at[pos] = span{s.end, n}
	s.end += int64(n)
	return sum, nil
}

// get reads back the delivery stored under pos (without its acknowledger:
// the hold settles it by tag).
func (s *heldStore) get(pos int) (amqp.Delivery, error) {
	s.mu.Lock()
	sp, ok := s.at[pos]
	if ok && s.w.Buffered() > 0 && sp.off+int64(sp.n) > s.end-int64(s.w.Buffered()) {
		if err := s.w.Flush(); err != nil {
			s.werr = fmt.Errorf("replay: hold store: %w", err)
		}
	}
	err := s.werr
	s.mu.Unlock()
	if !ok {
		return amqp.Delivery{}, fmt.Errorf("replay: no held message at %d", pos)
	}
	if err != nil {
		return amqp.Delivery{}, err
	}
	rec := make([]byte, sp.n)
	if _, err := s.f.ReadAt(rec, sp.off); err != nil {
		return amqp.Delivery{}, fmt.Errorf("replay: read a held message back: %w", err)
	}
	return readDelivery(rec)
}

// drop forgets pos; its bytes stay in the file until it is closed.
func (s *heldStore) drop(pos int) {
	s.mu.Lock()
	delete(s.at, pos)
	s.mu.Unlock()
}

func (s *heldStore) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		s.f.Close()
		s.f, s.at = nil, nil
	}
}

// appendDelivery encodes what a republish needs of d: its routing, every
// property, its headers with their field types, and its body.
func appendDelivery(out []byte, d amqp.Delivery) ([]byte, error) {
	out, err := appendDeliveryHead(out, d)
	return append(out, d.Body...), err
}

// appendDeliveryHead is appendDelivery up to the body, the body's length
// last: the body follows as it is.
func appendDeliveryHead(out []byte, d amqp.Delivery) ([]byte, error) {
	for _, s := range []string{d.Exchange, d.RoutingKey, d.ContentType, d.ContentEncoding, d.CorrelationId,
		d.ReplyTo, d.Expiration, d.MessageId, d.Type, d.UserId, d.AppId} {
		out = appendString(out, s)
	}
	var flags byte
	if d.Redelivered {
		flags |= 1
	}
	if !d.Timestamp.IsZero() {
		flags |= 2
	}
	out = append(out, flags, d.DeliveryMode, d.Priority)
	out = binary.AppendVarint(out, d.Timestamp.Unix())
	var err error
	if d.Headers == nil {
		out = append(out, 0)
	} else {
		out = append(out, 1)
		if out, err = appendTable(out, d.Headers, 0); err != nil {
			return out, err
		}
	}
	return binary.AppendUvarint(out, uint64(len(d.Body))), nil
}

func readDelivery(rec []byte) (amqp.Delivery, error) {
	r := fieldReader{b: rec}
	var d amqp.Delivery
	for _, s := range []*string{&d.Exchange, &d.RoutingKey, &d.ContentType, &d.ContentEncoding, &d.CorrelationId,
		&d.ReplyTo, &d.Expiration, &d.MessageId, &d.Type, &d.UserId, &d.AppId} {
		*s = r.string()
	}
	flags := r.byte()
	d.Redelivered = flags&1 != 0
	d.DeliveryMode, d.Priority = r.byte(), r.byte()
	if ts := r.varint(); flags&2 != 0 {
		d.Timestamp = time.Unix(ts, 0)
	}
	if r.byte() == 1 {
		d.Headers = r.table(0)
	}
	d.Body = r.bytes()
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("held message: %d bytes past its end", len(r.b))
	}
	return d, r.err
}
