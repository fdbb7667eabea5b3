// Package spill keeps the whole of every message a TUI browse read in a
// bbolt file in the user's cache directory, so memory holds only a compact
// index of the queue: what is on screen, filtered or exported is read back
// by position. It is a cache: written without fsync, removed on Close
// unless kept.
package spill

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/headerjson"
)

var bucket = []byte("messages")

// A chunk is written in one transaction once it holds this many messages
// or bytes: one fsync-free commit per chunk, not per message. Up to three
// chunks are in memory at once (filling, queued, being written), so the
// bytes stay small beside a read's --memory-budget: at 4 MiB a chunk, the
// spill of 1 MiB messages took 15 MiB of a 16 MiB budget.
const (
	chunkMessages = 512
	chunkBytes    = 1 << 20
)

// Store is one browse's messages on disk, keyed by Message.Position. It is
// safe for concurrent use: the browse writes while the screens read. Put
// only queues a message: a writer goroutine encodes and commits each full
// chunk while the browse goes on, so the disk never slows the read.
type Store struct {
	wmu      sync.Mutex // Put, Flush and Close: one writer side at a time
	mu       sync.Mutex // the fields below
	db       *bolt.DB
	path     string
	keep     bool
	filling  *chunk
	inflight []*chunk // handed to the writer, not yet committed
	writeErr error    // the writer's first error
	work     chan *chunk
	written  chan struct{} // closed when the writer has stopped
	idle     *sync.Cond    // signalled when a chunk is committed
	closed   bool
}

// chunk is messages written in one transaction.
type chunk struct {
	msgs  []triage.Message
	at    map[int]int // position -> index in msgs
	bytes int
}

func newChunk() *chunk { return &chunk{at: map[int]int{}} }

func newStore(db *bolt.DB, path string, keep bool) *Store {
	s := &Store{db: db, path: path, keep: keep, filling: newChunk(), work: make(chan *chunk, 2), written: make(chan struct{})}
	s.idle = sync.NewCond(&s.mu)
	go s.writer()
	return s
}

// Dir is where spill files go: dlqt's folder of the user's cache directory
// (XDG_CACHE_HOME, else ~/.cache, on Linux).
func Dir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("spill: no cache directory: %w", err)
	}
	return filepath.Join(base, "dlqt"), nil
}

// createIn creates a file named after pattern (os.CreateTemp) in dir, ""
// meaning Dir(), made (owner only) if it is missing.
func createIn(dir, pattern string) (*os.File, error) {
	if dir == "" {
		d, err := Dir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	return f, nil
}

// Create makes a new, empty store in dir ("" means Dir()), readable by its
// owner only. keep leaves the file in place on Close.
func Create(dir string, keep bool) (*Store, error) {
	f, err := createIn(dir, "browse-*.db")
	if err != nil {
		return nil, err
	}
	path := f.Name()
	f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("spill: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoSync: true, NoFreelistSync: true})
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("spill: %w", err)
	}
	db.NoSync = true
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucket); return err }); err != nil {
		db.Close()
		os.Remove(path)
		return nil, fmt.Errorf("spill: %w", err)
	}
	return newStore(db, path, keep), nil
}

// Open opens a kept store to read it; its Close leaves the file.
func Open(path string) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	return newStore(db, path, true), nil
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// ErrClosed is what a read of a closed store returns.
var ErrClosed = errors.New("spill: the store of this read is closed (the queue was read again)")

// Put stores m under m.Position. The store keeps m (its body and headers
// are not copied) until it is written: the caller must not change them.
func (s *Store) Put(m triage.Message) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.writeErr != nil {
		return s.writeErr
	}
	c := s.filling
	if i, dup := c.at[m.Position]; dup {
		c.msgs[i] = m
	} else {
		c.at[m.Position] = len(c.msgs)
		c.msgs = append(c.msgs, m)
	}
	c.bytes += len(m.Body)
	if len(c.msgs) >= chunkMessages || c.bytes >= chunkBytes {
		s.handOverLocked()
	}
	return nil
}

// handOverLocked sends the filling chunk to the writer; s.wmu and s.mu are
// held. The send may wait for the writer (two chunks queued at most): the
// store's memory stays bounded when the disk is slower than the read.
func (s *Store) handOverLocked() {
	c := s.filling
	if len(c.msgs) == 0 {
		return
	}
	s.filling = newChunk()
	s.inflight = append(s.inflight, c)
	s.mu.Unlock()
	s.work <- c
	s.mu.Lock()
}

// writer commits each chunk in one transaction, without fsync.
func (s *Store) writer() {
	defer close(s.written)
	for c := range s.work {
		err := s.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucket)
			b.FillPercent = 1 // keys only grow: fill each page, never split one in half
			for _, m := range c.msgs {
				rec, err := Encode(m)
				if err != nil {
					return err
				}
				if err := b.Put(key(m.Position), rec); err != nil {
					return err
				}
			}
			return nil
		})
		s.mu.Lock()
		if err != nil && s.writeErr == nil {
			s.writeErr = fmt.Errorf("spill: write: %w", err)
		}
		s.inflight = slices.DeleteFunc(s.inflight, func(o *chunk) bool { return o == c })
		s.idle.Broadcast()
		s.mu.Unlock()
	}
}

// Flush writes what Put has queued and waits until it is committed.
func (s *Store) Flush() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.flushLocked()
}

func (s *Store) flushLocked() error {
	s.handOverLocked()
	for len(s.inflight) > 0 {
		s.idle.Wait()
	}
	return s.writeErr
}

// Message reads back the message stored at pos.
func (s *Store) Message(pos int) (triage.Message, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return triage.Message{}, ErrClosed
	}
	for _, c := range append([]*chunk{s.filling}, s.inflight...) {
		if i, ok := c.at[pos]; ok {
			m := c.msgs[i]
			s.mu.Unlock()
			return roundTrip(m) // a copy, as from the file
		}
	}
	db := s.db
	s.mu.Unlock()
	var m triage.Message
	err := db.View(func(tx *bolt.Tx) error {
		rec := tx.Bucket(bucket).Get(key(pos))
		if rec == nil {
			return fmt.Errorf("spill: no message at position %d", pos)
		}
		var err error
		m, err = Decode(rec) // copies: rec is valid only in the transaction
		return err
	})
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		err = ErrClosed
	}
	return m, err
}

// Close closes the store and removes its file unless it is kept; it
// returns the path of a kept file, "" otherwise. A second Close does
// nothing.
func (s *Store) Close() (kept string, err error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", nil
	}
	if s.keep {
		err = s.flushLocked()
	}
	s.closed = true
	close(s.work)
	s.mu.Unlock()
	<-s.written // what was queued is committed (or failed) before the file goes
	s.mu.Lock()
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	if s.keep {
		return s.path, err
	}
	if rerr := os.Remove(s.path); err == nil && rerr != nil && !os.IsNotExist(rerr) {
		err = rerr
	}
	return "", err
}

// roundTrip copies m as the file would give it back.
func roundTrip(m triage.Message) (triage.Message, error) {
	rec, err := Encode(m)
	if err != nil {
		return triage.Message{}, err
	}
	return Decode(rec)
}

func key(pos int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(pos)) }

// Encode writes m as a record: its fields length-prefixed as raw bytes (an
// AMQP short string need not be UTF-8, and JSON would alter it), the
// headers as tagged JSON (headerjson), then the body as it is.
func Encode(m triage.Message) ([]byte, error) {
	out, err := appendHead(nil, m, len(m.Body))
	return append(out, m.Body...), err
}

// appendHead is Encode up to the body, with room for extra bytes more.
func appendHead(out []byte, m triage.Message, extra int) ([]byte, error) {
	h := headerjson.AppendTagged(nil, m.Headers)
	p := m.Properties
	out = slices.Grow(out, 128+len(h)+extra)
	for _, s := range []string{m.Queue, m.Exchange, m.RoutingKey, p.MessageID, p.CorrelationID, p.ContentType,
		p.ContentEncoding, p.Type, p.AppID, p.UserID, p.ReplyTo, p.Expiration} {
		out = appendBytes(out, s)
	}
	var flags byte
	if m.Redelivered {
		flags |= flagRedelivered
	}
	if m.Body == nil {
		flags |= flagNilBody
	}
	if !p.Timestamp.IsZero() {
		flags |= flagTimestamp
	}
	out = append(out, flags, p.Priority, p.DeliveryMode)
	out = binary.AppendVarint(out, int64(m.Position))
	out = binary.AppendVarint(out, p.Timestamp.Unix())
	out = binary.AppendVarint(out, int64(p.Timestamp.Nanosecond()))
	return appendBytes(out, string(h)), nil
}

const (
	flagRedelivered = 1 << iota
	flagNilBody
	flagTimestamp
)

func appendBytes(out []byte, s string) []byte {
	out = binary.AppendUvarint(out, uint64(len(s)))
	return append(out, s...)
}

var errDamaged = errors.New("spill: a damaged record")

// recordReader reads the fields of a record in order; the first error sticks.
type recordReader struct {
	rec []byte
	err error
}

func (r *recordReader) bytes() []byte {
	n, w := binary.Uvarint(r.rec)
	if r.err != nil || w <= 0 || uint64(len(r.rec)-w) < n {
		r.err = errDamaged
		return nil
	}
	b := r.rec[w : w+int(n)]
	r.rec = r.rec[w+int(n):]
	return b
}

func (r *recordReader) varint() int64 {
	v, w := binary.Varint(r.rec)
	if r.err != nil || w <= 0 {
		r.err = errDamaged
		return 0
	}
	r.rec = r.rec[w:]
	return v
}

func (r *recordReader) byte() byte {
	if r.err != nil || len(r.rec) == 0 {
		r.err = errDamaged
		return 0
	}
	b := r.rec[0]
	r.rec = r.rec[1:]
	return b
}

// Decode reads a record Encode wrote; the message owns its memory.
func Decode(rec []byte) (triage.Message, error) {
	m, err := decode(rec)
	if m.Body != nil {
		m.Body = append([]byte{}, m.Body...)
	}
	return m, err
}

// decode is Decode with the body a part of rec.
func decode(rec []byte) (triage.Message, error) {
	r := &recordReader{rec: rec}
	var s [12]string
	for i := range s {
		s[i] = string(r.bytes())
	}
	flags, prio, mode := r.byte(), r.byte(), r.byte()
	pos, sec, nsec := r.varint(), r.varint(), r.varint()
	h := r.bytes()
	if r.err != nil {
		return triage.Message{}, r.err
	}
	dec := json.NewDecoder(bytes.NewReader(h))
	dec.UseNumber()
	var tagged triage.Headers
	if err := dec.Decode(&tagged); err != nil {
		return triage.Message{}, fmt.Errorf("spill: decode headers: %w", err)
	}
	headers, err := headerjson.Untag(tagged)
	if err != nil {
		return triage.Message{}, fmt.Errorf("spill: decode headers: %w", err)
	}
	m := triage.Message{
		Queue: s[0], Position: int(pos), Redelivered: flags&flagRedelivered != 0, Exchange: s[1], RoutingKey: s[2],
		Properties: triage.Properties{
			MessageID: s[3], CorrelationID: s[4], ContentType: s[5], ContentEncoding: s[6], Type: s[7],
			AppID: s[8], UserID: s[9], ReplyTo: s[10], Expiration: s[11], Priority: prio, DeliveryMode: mode,
		},
		Headers: headers,
	}
	if flags&flagTimestamp != 0 {
		m.Properties.Timestamp = time.Unix(sec, nsec).UTC()
	}
	if flags&flagNilBody == 0 {
		m.Body = r.rec[:len(r.rec):len(r.rec)]
	}
	return m, nil
}
