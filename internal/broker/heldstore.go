package broker

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
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
// The records are spill.Records: an unlinked file in the user's cache
// directory, so nothing of the messages (secrets included) stays on disk
// once dlqt exits, however it exits. A record is kept by the hold's
// position of its delivery.
type heldStore struct {
	mu sync.Mutex
	rs *spill.Records
	// at is, by position, its record + 1 (0: none): four bytes a delivery
	// read, where a map from position to record took 46 a message held.
	at  []int32
	buf []byte
}

func newHeldStore() (*heldStore, error) {
	rs, err := spill.CreateRecords("", "hold-*.bin")
	if err != nil {
		return nil, fmt.Errorf("replay: hold store: %w", err)
	}
	return &heldStore{rs: rs}, nil
}

// reserve makes room for the positions of n deliveries.
func (s *heldStore) reserve(n int) {
	s.mu.Lock()
	s.at = slices.Grow(s.at, n)
	s.mu.Unlock()
}

// put writes delivery d under pos and returns the SHA-256 of its body. The
// body is written as it is, never copied: a hold of one 128 MiB message
// costs no second 128 MiB.
func (s *heldStore) put(pos int, d amqp.Delivery) ([32]byte, error) {
	sum := sha256.Sum256(d.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	head, err := appendDeliveryHead(s.buf[:0], d)
	if err != nil {
		return sum, err
	}
	s.buf = head
	i, err := s.rs.Append(head, d.Body)
	if err != nil {
		return sum, fmt.Errorf("replay: hold store: %w", err)
	}
	if i >= math.MaxInt32 {
		return sum, fmt.Errorf("replay: hold store: more than %d messages", math.MaxInt32-1)
	}
	if n := pos + 1; n > len(s.at) { // grown in place: no slice made a message
		was := len(s.at)
		s.at = slices.Grow(s.at, n-was)[:n]
		clear(s.at[was:])
	}
	s.at[pos] = int32(i) + 1
	return sum, nil
}

// get reads back the delivery stored under pos (without its acknowledger:
// the hold settles it by tag).
func (s *heldStore) get(pos int) (amqp.Delivery, error) {
	s.mu.Lock()
	i := -1
	if pos >= 0 && pos < len(s.at) {
		i = int(s.at[pos]) - 1
	}
	s.mu.Unlock()
	if i < 0 {
		return amqp.Delivery{}, fmt.Errorf("replay: no held message at %d", pos)
	}
	rec, err := s.rs.Read(i, false)
	if err != nil {
		return amqp.Delivery{}, fmt.Errorf("replay: read a held message back: %w", err)
	}
	return readDelivery(rec)
}

// drop forgets pos; its bytes stay in the file until it is closed.
func (s *heldStore) drop(pos int) {
	s.mu.Lock()
	if pos >= 0 && pos < len(s.at) {
		s.at[pos] = 0
	}
	s.mu.Unlock()
}

func (s *heldStore) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rs.Close()
	s.at = nil
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
