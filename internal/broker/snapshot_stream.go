package broker

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/dlqt/dlqt/internal/triage"
)

// SnapshotWriter writes a snapshot as its messages arrive: the topology
// first, then each batch message by message, so a capture of a million
// messages never holds more than the one being written. The layout is the
// one ReadSnapshot has always read (only the order of a batch's fields
// differs: what is known only at its end comes after its messages).
type SnapshotWriter struct {
	out      *bufio.Writer
	enc      *json.Encoder
	batches  int  // batches begun
	messages int  // messages written in the open batch
	open     bool // a batch is begun and not ended
	err      error
}

// NewSnapshotWriter starts a snapshot on w with head's format, source,
// time, redaction and topology; head's batches are ignored.
func NewSnapshotWriter(w io.Writer, head SnapshotFile) (*SnapshotWriter, error) {
	sw := &SnapshotWriter{out: bufio.NewWriterSize(w, 64<<10)}
	sw.enc = json.NewEncoder(sw.out)
	if head.Format == "" {
		head.Format = SnapshotFormat
	}
	top, err := topologyHeaders(head.Topology, func(h triage.Headers) (triage.Headers, error) { return tagHeaders(h), nil })
	if err != nil {
		return nil, err
	}
	sw.raw(`{"format":`)
	sw.value(head.Format)
	sw.raw(`,"source":`)
	sw.value(head.Source)
	sw.raw(`,"taken_at":`)
	sw.value(head.TakenAt)
	if head.Redacted {
		sw.raw(`,"redacted":true`)
	}
	sw.raw(`,"topology":`)
	sw.value(top)
	sw.raw(`,"batches":[`)
	return sw, sw.err
}

func (sw *SnapshotWriter) raw(s string) {
	if sw.err == nil {
		_, sw.err = sw.out.WriteString(s)
	}
}

// value writes v as JSON (the encoder ends it with a newline: one message
// a line).
func (sw *SnapshotWriter) value(v any) {
	if sw.err == nil {
		sw.err = sw.enc.Encode(v)
	}
}

// BeginBatch opens the batch of one queue.
func (sw *SnapshotWriter) BeginBatch(vhost, queue string) error {
	if sw.open {
		return errors.New("snapshot: a batch is already open")
	}
	if sw.batches > 0 {
		sw.raw(",")
	}
	sw.batches++
	sw.open, sw.messages = true, 0
	sw.raw(`{"vhost":`)
	sw.value(vhost)
	sw.raw(`,"queue":`)
	sw.value(queue)
	sw.raw(`,"messages":[`)
	return sw.err
}

// Message writes one message of the open batch.
func (sw *SnapshotWriter) Message(m triage.Message) error {
	if !sw.open {
		return errors.New("snapshot: no batch is open")
	}
	if sw.messages > 0 {
		sw.raw(",")
	}
	sw.messages++
	m.Headers = tagHeaders(m.Headers)
	sw.value(m)
	return sw.err
}

// EndBatch closes the open batch with what is known only once its browse
// ended: the depth, the bound, the time and where it stopped.
func (sw *SnapshotWriter) EndBatch(b triage.Batch) error {
	if !sw.open {
		return errors.New("snapshot: no batch is open")
	}
	sw.open = false
	sw.raw(`],"depth":`)
	sw.value(b.Depth)
	sw.raw(`,"limit":`)
	sw.value(b.Limit)
	sw.raw(`,"taken_at":`)
	sw.value(b.TakenAt)
	if b.Bound != "" {
		sw.raw(`,"bound":`)
		sw.value(b.Bound)
	}
	if b.Unreadable != nil {
		sw.raw(`,"unreadable":`)
		sw.value(b.Unreadable)
	}
	sw.raw("}")
	return sw.err
}

// Batch writes a whole batch.
func (sw *SnapshotWriter) Batch(b triage.Batch) error {
	if err := sw.BeginBatch(b.Vhost, b.Queue); err != nil {
		return err
	}
	for _, m := range b.Messages {
		if err := sw.Message(m); err != nil {
			return err
		}
	}
	return sw.EndBatch(b)
}

// Close ends the snapshot and flushes it; it does not close w.
func (sw *SnapshotWriter) Close() error {
	if sw.open {
		return errors.New("snapshot: a batch is still open")
	}
	sw.raw("]}\n")
	if sw.err == nil {
		sw.err = sw.out.Flush()
	}
	return sw.err
}

// snapshotScan reads a snapshot token by token: the head (format, source,
// topology) whole, and each batch's messages one at a time, handed to
// message when keep says the batch's queue is wanted (and skipped
// undecoded otherwise), so reading holds one message at a time.
type snapshotScan struct {
	keep    func(queue string) bool
	message func(b *triage.Batch, m triage.Message) error // nil: keep them in the batch
	// batch is called for every batch at its end, its messages kept or
	// not, with how many it holds.
	batch func(b triage.Batch, count int) error
}

// openSnapshotStream unwraps gzip when the content starts with its magic.
func openSnapshotStream(r io.Reader) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("not a dlqt snapshot: %v", err)
		}
		return zr, func() { zr.Close() }, nil
	}
	return br, func() {}, nil
}

// run scans r and returns the head (no batches); errors start with "not a
// dlqt snapshot" when the content is not one.
func (sc snapshotScan) run(r io.Reader) (SnapshotFile, error) {
	in, done, err := openSnapshotStream(r)
	if err != nil {
		return SnapshotFile{}, err
	}
	defer done()
	dec := json.NewDecoder(in)
	dec.UseNumber()
	head, err := sc.object(dec)
	var cb callbackError
	if errors.As(err, &cb) { // the caller's own, not the file's
		return head, cb.err
	}
	if err != nil {
		return SnapshotFile{}, fmt.Errorf("not a dlqt snapshot: %v", err)
	}
	if head.Format != SnapshotFormat {
		return SnapshotFile{}, fmt.Errorf("not a dlqt snapshot: format %q, want %q", head.Format, SnapshotFormat)
	}
	return head, nil
}

// object reads the top-level object, field by field, in any order.
func (sc snapshotScan) object(dec *json.Decoder) (SnapshotFile, error) {
	var head SnapshotFile
	if err := expectDelim(dec, '{'); err != nil {
		return head, err
	}
	for dec.More() {
		key, err := fieldName(dec)
		if err != nil {
			return head, err
		}
		switch key {
		case "batches":
			err = sc.batches(dec)
		case "topology":
			if err = dec.Decode(&head.Topology); err == nil {
				head.Topology, err = topologyHeaders(head.Topology, untagHeaders)
			}
		case "format":
			err = dec.Decode(&head.Format)
		case "source":
			err = dec.Decode(&head.Source)
		case "taken_at":
			err = dec.Decode(&head.TakenAt)
		case "redacted":
			err = dec.Decode(&head.Redacted)
		default:
			err = skipValue(dec)
		}
		if err != nil {
			return head, err
		}
	}
	return head, expectDelim(dec, '}')
}

func (sc snapshotScan) batches(dec *json.Decoder) error {
	if err := expectDelim(dec, '['); err != nil {
		return err
	}
	for dec.More() {
		if err := sc.oneBatch(dec); err != nil {
			return err
		}
	}
	return expectDelim(dec, ']')
}

// oneBatch reads one batch; its messages are kept when its queue is known
// and wanted by the time they come (the writer puts the queue first).
func (sc snapshotScan) oneBatch(dec *json.Decoder) error {
	var b triage.Batch
	count := 0
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		key, err := fieldName(dec)
		if err != nil {
			return err
		}
		switch key {
		case "messages":
			count, err = sc.messages(dec, &b)
		case "vhost":
			err = dec.Decode(&b.Vhost)
		case "queue":
			err = dec.Decode(&b.Queue)
		case "depth":
			err = dec.Decode(&b.Depth)
		case "limit":
			err = dec.Decode(&b.Limit)
		case "taken_at":
			err = dec.Decode(&b.TakenAt)
		case "unreadable":
			err = dec.Decode(&b.Unreadable)
		case "bound":
			err = dec.Decode(&b.Bound)
		default:
			err = skipValue(dec)
		}
		if err != nil && key == "messages" {
			return fmt.Errorf("queue %q %w", b.Queue, err) // "queue "q" message 3: ..."
		}
		if err != nil {
			return fmt.Errorf("queue %q: %w", b.Queue, err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return err
	}
	if sc.batch != nil {
		if err := sc.batch(b, count); err != nil {
			return callbackError{err}
		}
	}
	return nil
}

func (sc snapshotScan) messages(dec *json.Decoder, b *triage.Batch) (int, error) {
	if err := expectDelim(dec, '['); err != nil {
		return 0, err
	}
	want := sc.keep == nil || sc.keep(b.Queue)
	n := 0
	for ; dec.More(); n++ {
		if !want {
			if err := skipValue(dec); err != nil {
				return n, err
			}
			continue
		}
		m, err := decodeMessage(dec)
		if err != nil {
			return n, fmt.Errorf("message %d: %w", n, err)
		}
		if sc.message == nil {
			b.Messages = append(b.Messages, m)
		} else if err := sc.message(b, m); err != nil {
			return n, callbackError{err}
		}
	}
	return n, expectDelim(dec, ']')
}

func decodeMessage(dec *json.Decoder) (triage.Message, error) {
	var m triage.Message
	if err := dec.Decode(&m); err != nil {
		return m, err
	}
	var err error
	m.Headers, err = untagHeaders(m.Headers)
	return m, err
}

// callbackError carries an error of the scan's caller (its message or
// batch function) out of the scan unchanged.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }
func (e callbackError) Unwrap() error { return e.err }

// errEnough stops a scan that has what it came for.
var errEnough = errors.New("snapshot: enough read")

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, found %v", want, tok)
	}
	return nil
}

func fieldName(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	key, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("want a field name, found %v", tok)
	}
	return key, nil
}

// skipValue reads past one value without keeping it.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
