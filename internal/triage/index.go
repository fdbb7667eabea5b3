package triage

import (
	"encoding/binary"
	"time"
	"unsafe"
)

// Index holds the index entries of one spilled read (Spilled.Index)
// packed: each entry is a few varints and the strings only it has, about
// a hundred bytes, where a Triaged in a slice takes 552 before its
// strings. A million entries fit the TUI's default index budget; At
// unpacks one when a screen, a filter or a plan asks for it.
//
// Strings that many entries share (exchanges, queues, codes, event
// types) are written once, in a table; the first maxInterned of them.
// Append is for one goroutine; once the read is done, At may be called
// from any number at once.
type Index struct {
	spilled *Spilled
	chunks  [][]byte // entries, packed; a chunk is never moved once made
	at      []uint64 // entry i: chunk<<32 | offset
	strs    []string
	strAt   map[string]uint64
	zones   []*time.Location
	zoneAt  map[zone]uint64
	origins map[origin]*origin
	// headers holds the rare entry whose kept headers are not the one
	// string value an entry packs (indexHeaders).
	headers map[int]Headers
	bytes   int64
	// scratch is where Append packs an entry before it copies it in place
	// (its size is known only then).
	scratch []byte
}

type zone struct {
	name   string
	offset int
}

const indexChunk = 1 << 20

// NewIndex returns an empty index; expect is how many entries to make
// room for (0: grow as they come).
func NewIndex(expect int) *Index {
	return &Index{at: make([]uint64, 0, expect), strAt: map[string]uint64{}, zoneAt: map[zone]uint64{}}
}

// Len is how many entries the index holds.
func (x *Index) Len() int {
	if x == nil {
		return 0
	}
	return len(x.at)
}

// Bytes is about what the index holds in memory.
func (x *Index) Bytes() int64 { return x.bytes }

// EntryCost is what Append adds for an entry of n packed bytes: the bytes,
// its place in the index and in a group's members.
func EntryCost(n int) int64 { return int64(n) + 16 }

// Append packs t, an index entry (Spilled.Index), and returns what it
// cost (EntryCost). What an index entry does not keep (a body, a
// timeline) is not packed.
func (x *Index) Append(t *Triaged) int64 {
	if x.spilled == nil {
		x.spilled = t.spilled
	}
	e := entryWriter{x: x, buf: x.scratch[:0]}
	e.entry(t, len(x.at))
	x.scratch = e.buf
	n := len(e.buf)
	c := len(x.chunks) - 1
	if c < 0 || len(x.chunks[c])+n > cap(x.chunks[c]) {
		x.chunks = append(x.chunks, make([]byte, 0, max(indexChunk, n)))
		c++
		x.bytes += int64(cap(x.chunks[c]))
	}
	off := len(x.chunks[c])
	x.chunks[c] = append(x.chunks[c], e.buf...)
	x.at = append(x.at, uint64(c)<<32|uint64(off))
	x.bytes += 8
	return EntryCost(n)
}

// Truncate keeps the first n entries (what a budget let a read keep).
func (x *Index) Truncate(n int) {
	for i := n; i < len(x.at); i++ {
		delete(x.headers, i)
	}
	x.at = x.at[:n]
}

// At unpacks entry i: the same Triaged that was appended, its strings
// shared with the index.
func (x *Index) At(i int) Triaged {
	a := x.at[i]
	c, off := a>>32, int(uint32(a))
	r := entryReader{x: x, buf: x.chunks[c][off:]}
	return r.entry(i)
}

// Flags of an entry.
const (
	fRedelivered = 1 << iota
	fJSON
	fBinary
	fFailure
	fDecoding
	fTruncated
	fFirstDeathQueue // headers: x-first-death-queue, a string
	fOtherHeaders    // headers: in Index.headers
	fOrigin
	fOriginKnown
)

type entryWriter struct {
	x        *Index
	buf      []byte
	id       string
	lastTime time.Time
}

func (e *entryWriter) uint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *entryWriter) int(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }

// String tags: 0 "", 1 the entry's id, 2 a time written as RFC 3339 (its
// time follows, and formats back to the very same string), 2k+3 the
// table's string k, 2k+4 a string of k bytes that follow.
func (e *entryWriter) str(s string, shared bool) {
	switch {
	case s == "":
		e.uint(0)
	case s == e.id:
		e.uint(1)
	default:
		if k, ok := e.x.strAt[s]; ok {
			e.uint(2*k + 3)
			return
		}
		if shared && len(e.x.strs) < maxInterned {
			k := uint64(len(e.x.strs))
			e.x.strs = append(e.x.strs, s)
			e.x.strAt[s] = k
			e.x.bytes += int64(len(s)) + 64
			e.uint(2*k + 3)
			return
		}
		if t, ok := rfc3339(s); ok {
			e.uint(2)
			e.time(t)
			return
		}
		e.uint(2*uint64(len(s)) + 4)
		e.buf = append(e.buf, s...)
	}
}

// rfc3339 is s as a time, when it is one that formats back to s: an
// envelope's occurred_at and failure times, packed in 8 to 12 bytes
// instead of 20 to 35.
func rfc3339(s string) (time.Time, bool) {
	if len(s) < len("2006-01-02T15:04:05Z") || len(s) > len(time.RFC3339Nano) || s[4] != '-' || s[10] != 'T' {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Format(time.RFC3339Nano) != s {
		return time.Time{}, false
	}
	return t, true
}

// Time tags: 0 zero, 1 the entry's time before (same instant, same
// location), 2 UTC, 3 Local, 4+k the zone table's zone k; then Unix
// seconds and nanoseconds.
func (e *entryWriter) time(t time.Time) {
	switch {
	case t.IsZero():
		e.uint(0)
		return
	case t == e.lastTime:
		e.uint(1)
		return
	}
	e.lastTime = t
	switch loc := t.Location(); loc {
	case time.UTC:
		e.uint(2)
	case time.Local:
		e.uint(3)
	default:
		name, off := t.Zone()
		z := zone{name, off}
		k, ok := e.x.zoneAt[z]
		if !ok {
			k = uint64(len(e.x.zones))
			e.x.zones = append(e.x.zones, time.FixedZone(name, off))
			e.x.zoneAt[z] = k
		}
		e.uint(4 + k)
	}
	e.int(t.Unix())
	e.uint(uint64(t.Nanosecond()))
}

func (e *entryWriter) entry(t *Triaged, i int) {
	m, p, env := &t.Message, &t.Message.Properties, &t.Envelope
	var flags uint64
	set := func(f uint64, on bool) {
		if on {
			flags |= f
		}
	}
	set(fRedelivered, m.Redelivered)
	set(fJSON, env.IsJSON)
	set(fBinary, t.Binary)
	set(fFailure, env.Failure != nil)
	set(fDecoding, t.Decoding != nil)
	set(fTruncated, t.Decoding != nil && t.Decoding.Truncated)
	fdq, fdqOnly := m.Headers[indexHeaders[0]].(string)
	fdqOnly = fdqOnly && len(m.Headers) == 1
	set(fFirstDeathQueue, fdqOnly)
	set(fOtherHeaders, len(m.Headers) > 0 && !fdqOnly)
	set(fOrigin, t.origin != nil)
	set(fOriginKnown, t.origin != nil && t.origin.known)
	e.uint(flags)
	e.id = ""
	e.str(t.ID, false)
	e.id = t.ID
	e.int(int64(m.Position - i))
	e.str(m.Queue, true)
	e.str(m.Exchange, true)
	e.str(m.RoutingKey, true)
	for _, s := range []string{p.MessageID, p.CorrelationID} {
		e.str(s, false)
	}
	for _, s := range []string{p.ContentType, p.ContentEncoding, p.Type, p.AppID, p.UserID, p.ReplyTo, p.Expiration} {
		e.str(s, true)
	}
	e.time(p.Timestamp)
	e.buf = append(e.buf, p.Priority, p.DeliveryMode)
	if fdqOnly {
		e.str(fdq, true)
	} else if len(m.Headers) > 0 {
		if e.x.headers == nil {
			e.x.headers = map[int]Headers{}
		}
		e.x.headers[i] = m.Headers
	}
	e.str(env.MessageID, false)
	e.str(env.EventType, true)
	e.str(env.SchemaVersion, true)
	e.str(env.OccurredAt, false)
	e.str(env.CorrelationID, false)
	e.str(env.TraceID, false)
	e.str(env.TraceParent, false)
	if f := env.Failure; f != nil {
		e.str(f.ReasonCode, true)
		e.str(f.Consumer, true)
		e.str(f.ConsumerVersion, true)
		e.int(int64(f.Attempt))
		e.str(f.FirstFailedAt, false)
		e.str(f.LastFailedAt, false)
	}
	e.uint(uint64(len(t.Deaths)))
	for _, d := range t.Deaths {
		e.str(d.Queue, true)
		e.str(string(d.Reason), true)
		e.int(d.Count)
		e.time(d.Time)
		e.str(d.Exchange, true)
		e.uint(uint64(len(d.RoutingKeys)))
		for _, k := range d.RoutingKeys {
			e.str(k, true)
		}
		e.str(d.OriginalExpiration, true)
	}
	e.str(string(t.Reason), true)
	e.str(t.ReasonCode, true)
	e.str(t.ExceptionType, true)
	e.str(t.ThrownAt, true)
	e.int(int64(t.Attempts))
	e.int(int64(t.DeliveryCount))
	e.time(t.DiedAt)
	e.str(t.Payload, false)
	e.int(int64(t.PayloadBytes))
	e.int(int64(t.Redactions))
	if d := t.Decoding; d != nil {
		e.str(d.Encoding, true)
		e.int(int64(d.EncodedBytes))
		e.int(int64(d.DecodedBytes))
		e.str(d.Error, true)
	}
	e.str(t.TraceID, false)
	e.int(int64(t.TimelineRedactions))
	if o := t.origin; o != nil {
		e.str(o.route.Exchange, true)
		e.str(o.route.RoutingKey, true)
		if _, ok := e.x.origins[*o]; !ok && len(e.x.origins) < maxInterned {
			if e.x.origins == nil {
				e.x.origins = map[origin]*origin{}
			}
			e.x.origins[*o] = o
		}
	}
}

type entryReader struct {
	x        *Index
	buf      []byte
	id       string
	lastTime time.Time
}

func (r *entryReader) uint() uint64 {
	v, n := binary.Uvarint(r.buf)
	r.buf = r.buf[n:]
	return v
}

func (r *entryReader) int() int64 {
	v, n := binary.Varint(r.buf)
	r.buf = r.buf[n:]
	return v
}

func (r *entryReader) str() string {
	switch v := r.uint(); {
	case v == 0:
		return ""
	case v == 1:
		return r.id
	case v == 2:
		return r.time().Format(time.RFC3339Nano)
	case v%2 == 1:
		return r.x.strs[(v-3)/2]
	default:
		n := int((v - 4) / 2)
		s := unsafe.String(unsafe.SliceData(r.buf), n) // the chunk never changes under it
		r.buf = r.buf[n:]
		return s
	}
}

func (r *entryReader) time() time.Time {
	var loc *time.Location
	switch v := r.uint(); v {
	case 0:
		return time.Time{}
	case 1:
		return r.lastTime
	case 2:
		loc = time.UTC
	case 3:
		loc = time.Local
	default:
		loc = r.x.zones[v-4]
	}
	sec := r.int()
	t := time.Unix(sec, int64(r.uint())).In(loc)
	r.lastTime = t
	return t
}

func (r *entryReader) entry(i int) Triaged {
	var t Triaged
	m, p, env := &t.Message, &t.Message.Properties, &t.Envelope
	flags := r.uint()
	t.ID = r.str()
	r.id = t.ID
	m.Position = int(r.int()) + i
	m.Redelivered = flags&fRedelivered != 0
	m.Queue, m.Exchange, m.RoutingKey = r.str(), r.str(), r.str()
	p.MessageID, p.CorrelationID = r.str(), r.str()
	p.ContentType, p.ContentEncoding, p.Type, p.AppID, p.UserID, p.ReplyTo, p.Expiration =
		r.str(), r.str(), r.str(), r.str(), r.str(), r.str(), r.str()
	p.Timestamp = r.time()
	p.Priority, p.DeliveryMode = r.buf[0], r.buf[1]
	r.buf = r.buf[2:]
	switch {
	case flags&fFirstDeathQueue != 0:
		m.Headers = Headers{indexHeaders[0]: r.str()}
	case flags&fOtherHeaders != 0:
		m.Headers = r.x.headers[i]
	}
	env.IsJSON = flags&fJSON != 0
	env.MessageID, env.EventType, env.SchemaVersion, env.OccurredAt = r.str(), r.str(), r.str(), r.str()
	env.CorrelationID, env.TraceID, env.TraceParent = r.str(), r.str(), r.str()
	if flags&fFailure != 0 {
		f := &Failure{ReasonCode: r.str(), Consumer: r.str(), ConsumerVersion: r.str()}
		f.Attempt = int(r.int())
		f.FirstFailedAt, f.LastFailedAt = r.str(), r.str()
		env.Failure = f
	}
	if n := r.uint(); n > 0 {
		t.Deaths = make([]Death, n)
		for k := range t.Deaths {
			d := &t.Deaths[k]
			d.Queue, d.Reason = r.str(), Reason(r.str())
			d.Count = r.int()
			d.Time = r.time()
			d.Exchange = r.str()
			if n := r.uint(); n > 0 {
				d.RoutingKeys = make([]string, n)
				for j := range d.RoutingKeys {
					d.RoutingKeys[j] = r.str()
				}
			}
			d.OriginalExpiration = r.str()
		}
	}
	t.Reason, t.ReasonCode, t.ExceptionType, t.ThrownAt = Reason(r.str()), r.str(), r.str(), r.str()
	t.Attempts = int(r.int())
	t.DeliveryCount = int(r.int())
	t.DiedAt = r.time()
	t.Payload = r.str()
	t.PayloadBytes = int(r.int())
	t.Binary = flags&fBinary != 0
	t.Redactions = int(r.int())
	if flags&fDecoding != 0 {
		d := &BodyDecoding{Encoding: r.str()}
		d.EncodedBytes, d.DecodedBytes = int(r.int()), int(r.int())
		d.Truncated = flags&fTruncated != 0
		d.Error = r.str()
		t.Decoding = d
	}
	t.TraceID = r.str()
	t.TimelineRedactions = int(r.int())
	if flags&fOrigin != 0 {
		o := origin{route: Route{Exchange: r.str(), RoutingKey: r.str()}, known: flags&fOriginKnown != 0}
		if shared, ok := r.x.origins[o]; ok {
			t.origin = shared
		} else {
			t.origin = &o
		}
	}
	t.spilled = r.x.spilled
	return t
}
