package triage

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

// MaxDecodedBody bounds what a compressed body decodes to. gzip and deflate
// reach about 1,000:1, so a 4 KiB body may claim 4 MiB and a 64 KiB one
// 64 MiB: a ratio bounds nothing, an absolute size does. 4 MiB is 16 times
// what a page or a JSON line shows (maxTextBytes) and holds any envelope a
// real producer compresses (JSON shrinks 5-20 times), while a read of many
// bombs costs at most 4 MiB per core at a time (Analyze decodes in
// parallel, and keeps only the rendered text).
const MaxDecodedBody = 4 << 20

// BodyDecoding says how a body's content_encoding was undone to read it.
// The message keeps its bytes and encoding as read: a replay or a discard
// publishes what was read, never a re-encoding of it.
type BodyDecoding struct {
	Encoding     string `json:"encoding"` // gzip, x-gzip or deflate, lower-cased
	EncodedBytes int    `json:"encoded_bytes"`
	DecodedBytes int    `json:"decoded_bytes"`
	// Truncated: decoding stopped at MaxDecodedBody; what follows is unread.
	Truncated bool `json:"truncated,omitempty"`
	// Error is why the body could not be decoded (then its raw bytes are
	// shown): our words around the decompressor's, never message text.
	Error string `json:"error,omitempty"`
}

// String is the decoding as the message page heads the payload with it:
// "gzip, 597 → 2,310 bytes".
func (d BodyDecoding) String() string {
	switch {
	case d.Error != "":
		return fmt.Sprintf("%s, %s bytes, not decoded: %s; raw bytes shown", d.Encoding, thousands(d.EncodedBytes), d.Error)
	case d.Truncated:
		return fmt.Sprintf("%s, %s → %s+ bytes, stopped at the %d MiB limit", d.Encoding, thousands(d.EncodedBytes), thousands(d.DecodedBytes), MaxDecodedBody>>20)
	}
	return fmt.Sprintf("%s, %s → %s bytes", d.Encoding, thousands(d.EncodedBytes), thousands(d.DecodedBytes))
}

// DecodeBody undoes a gzip (x-gzip) or deflate content_encoding, for
// reading only. Deflate comes in zlib framing (RFC 1950, what HTTP means
// by it) or raw (RFC 1951, what some libraries send): both are read. Any
// other content_encoding (none, identity, a charset such as Spring's
// "UTF-8") is not a compression and returns body and nil. A corrupt body
// comes back as it is, with the reason in the decoding; a bomb stops at
// MaxDecodedBody. body is never changed.
func DecodeBody(body []byte, contentEncoding string) ([]byte, *BodyDecoding) {
	enc := strings.ToLower(strings.TrimSpace(contentEncoding))
	if len(body) == 0 || (enc != "gzip" && enc != "x-gzip" && enc != "deflate") {
		return body, nil
	}
	d := &BodyDecoding{Encoding: enc, EncodedBytes: len(body)}
	var out []byte
	var err error
	if enc == "deflate" {
		out, err = inflate(body)
	} else {
		out, err = gunzip(body)
	}
	if err != nil {
		d.Error = err.Error()
		return body, d
	}
	d.DecodedBytes, d.Truncated = len(out), len(out) == MaxDecodedBody
	return out, d
}

// Decompressors are pooled: each holds a 32 KiB window and more, which
// allocated anew for every body cost 88 KiB a message (a read of 10,000
// gzip messages allocated 885 MB, 62 MB pooled). A pooled reader keeps a
// reference to its last body until reused or until the pool is emptied by
// the next garbage collections, as sync.Pool is.
var (
	gzipReaders  sync.Pool // *gzip.Reader
	flateReaders sync.Pool // io.ReadCloser that is a flate.Resetter
)

func gunzip(body []byte) ([]byte, error) {
	r, _ := gzipReaders.Get().(*gzip.Reader)
	if r == nil {
		r = new(gzip.Reader)
	}
	defer gzipReaders.Put(r)
	if err := r.Reset(bytes.NewReader(body)); err != nil {
		return nil, notEncoded("gzip", err)
	}
	return readBounded(r)
}

// rawInflate reads raw deflate with a pooled decompressor.
func rawInflate(body []byte) ([]byte, error) {
	r, _ := flateReaders.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(bytes.NewReader(body))
	} else if err := r.(flate.Resetter).Reset(bytes.NewReader(body), nil); err != nil {
		return nil, corrupt(err)
	}
	defer flateReaders.Put(r)
	return readBounded(r)
}

// inflate reads zlib framing when the two header bytes say so (method 8,
// check bits a multiple of 31), else raw deflate; a raw stream may start
// like a zlib header by chance, so a failed zlib read is tried raw too.
func inflate(body []byte) ([]byte, error) {
	if len(body) >= 6 && body[0]&0x0f == 8 && (uint16(body[0])<<8|uint16(body[1]))%31 == 0 && body[1]&0x20 == 0 {
		// zlib is a 2-byte header, raw deflate, a 4-byte Adler-32: read the
		// middle with the pooled decompressor and check the sum here.
		if out, err := rawInflate(body[2:]); err == nil && len(out) == MaxDecodedBody {
			return out, nil // stopped at the limit: the sum is past it
		} else if err == nil && adler32.Checksum(out) == binary.BigEndian.Uint32(body[len(body)-4:]) {
			return out, nil
		}
	}
	return rawInflate(body)
}

// readBounded reads r to its end or to MaxDecodedBody, whichever is first.
// Past the limit nothing is checked (a checksum comes at the end): the
// decoding says it stopped.
func readBounded(r io.Reader) ([]byte, error) {
	out, err := io.ReadAll(io.LimitReader(r, MaxDecodedBody))
	if err != nil {
		return nil, corrupt(err)
	}
	return out, nil
}

func notEncoded(name string, err error) error {
	return fmt.Errorf("not %s data (%w)", name, err)
}

func corrupt(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("corrupt: unexpected EOF")
	}
	return fmt.Errorf("corrupt: %w", err)
}

// EncodeBody compresses body for contentEncoding as DecodeBody reads it
// (gzip, x-gzip; deflate in zlib framing). Only a redacted snapshot uses
// it: a message dlqt moves is published with the bytes it was read with.
func EncodeBody(body []byte, contentEncoding string) []byte {
	var out bytes.Buffer
	var w io.WriteCloser
	switch strings.ToLower(strings.TrimSpace(contentEncoding)) {
	case "gzip", "x-gzip":
		w = gzip.NewWriter(&out)
	case "deflate":
		w = zlib.NewWriter(&out)
	default:
		return body
	}
	_, _ = w.Write(body) // a bytes.Buffer takes everything
	_ = w.Close()
	return out.Bytes()
}

// EnvelopeOf is the envelope of m read through its content encoding: every
// reader of the envelope (analysis, identity, discard and replay checks)
// decodes it this way, so a gzip envelope groups with the plain ones.
func EnvelopeOf(m Message) Envelope {
	body, _ := DecodeBody(m.Body, m.Properties.ContentEncoding)
	return DecodeEnvelope(body)
}

// RenderMessage is RenderPayload of m's body read through its content
// encoding, with the decoding said: a body that stopped at the limit ends
// with a line that says so.
func RenderMessage(m Message, r *redact.Redactor) Payload {
	body, d := DecodeBody(m.Body, m.Properties.ContentEncoding)
	p := RenderPayload(body, m.Properties.ContentType, r)
	p.Decoding = d
	if d != nil && d.Truncated {
		p.Text += fmt.Sprintf("\n... decoding stopped at the %d MiB limit: the rest of the %s body is not shown", MaxDecodedBody>>20, d.Encoding)
	}
	return p
}

// thousands writes n with thousands separators: 2310 -> "2,310".
func thousands(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
