package triage

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxID bounds an identity taken from a message; real ids are far shorter.
const maxID = 256

// Volatile headers change while a message sits in or moves between queues
// (broker bookkeeping, shovels, dlqt's own replays), so they are not part of
// a message's identity: the same message must hash the same when browsed
// again, dead-lettered again or replayed.
var volatileHeaders = map[string]bool{
	"x-death":          true,
	"x-delivery-count": true,
	"x-acquired-count": true, // 4.x quorum queues
	"x-received-from":  true, // shovel and federation
	"x-opt-deaths":     true,
	hdrReplayID:        true,
	hdrReplayedAt:      true,
	hdrAttempts:        true,
}

// volatilePrefixes cover the broker's x-first-death-* and x-last-death-*
// families whole, so a field a later version adds is left out too, and
// every dlqt-* header a replay adds (a copy must hash like its source).
var volatilePrefixes = []string{"x-first-death-", "x-last-death-", "dlqt-"}

func volatileHeader(name string) bool {
	name = strings.ToLower(name)
	if volatileHeaders[name] {
		return true
	}
	for _, p := range volatilePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Identify returns the stable identity of each message (same order): the
// AMQP message_id, else the envelope's message_id, else "sha256:" and the
// first 16 bytes of a SHA-256 over the body, the properties the broker keeps
// and the headers that do not change on redelivery. Identical ids get an
// occurrence suffix in batch order: the first keeps the id, later ones get
// "#2", "#3"... The result depends only on the input, so browsing the same
// queue twice gives the same ids.
func Identify(ms []Message, envs []Envelope) []string {
	return SuffixIDs(BaseIDs(ms, envs))
}

// SuffixIDs gives base identities (BaseIDs) their occurrence suffixes in
// order, as Identify does: a reader that kept only the base ids of what it
// read numbers them exactly alike.
//
// Most queues repeat no id, so it first looks for repeats among 64-bit
// hashes of the ids, sorted: 8 bytes an id, where a map of every id was
// about 50 (a discard of 1,000,000 whole peaked at 408 MiB of RSS). Only
// ids whose hash repeats are counted in a map, and a suffix is taken when
// its hash is among the ids' or it was given already. The hash is FNV-1a,
// the same in every process: should a suffix's hash equal another id's
// without the two being equal, that suffix is skipped alike everywhere, so
// ids stay unique and the same from one read to the next.
func SuffixIDs(base []string) []string {
	ids := slices.Clone(base)
	hashes := make([]uint64, len(base))
	for i, id := range base {
		hashes[i] = idHash(id)
	}
	slices.Sort(hashes)
	var repeats map[uint64]bool // hashes seen more than once
	for i := 1; i < len(hashes); i++ {
		if hashes[i] == hashes[i-1] {
			if repeats == nil {
				repeats = map[uint64]bool{}
			}
			repeats[hashes[i]] = true
		}
	}
	if repeats == nil {
		return ids
	}
	count := map[string]int32{} // the ids whose hash repeats
	for _, id := range base {
		if repeats[idHash(id)] {
			count[id]++
		}
	}
	taken := func(cand string) bool {
		if count[cand] > 0 {
			return true
		}
		_, found := slices.BinarySearch(hashes, idHash(cand))
		return found
	}
	seen := map[string]int{} // occurrences so far, of the ids that repeat
	for i, id := range base {
		if count[id] < 2 {
			continue
		}
		seen[id]++
		n := seen[id]
		if n == 1 {
			continue
		}
		// An id that already ends in "#2" must not collide with a suffix.
		cand := id + "#" + strconv.Itoa(n)
		for taken(cand) {
			n++
			cand = id + "#" + strconv.Itoa(n)
		}
		seen[id] = n
		count[cand] = 1 // taken
		ids[i] = cand
	}
	return ids
}

// idHash is the 64-bit FNV-1a hash of id.
func idHash(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return h
}

// BaseIDs are the identities Identify gives, without the occurrence
// suffix: identical messages share one, wherever they stand in a batch.
func BaseIDs(ms []Message, envs []Envelope) []string {
	base := make([]string, len(ms))
	for i, m := range ms {
		id := oneLine(m.Properties.MessageID, maxID)
		if id == "" && i < len(envs) {
			id = oneLine(envs[i].MessageID, maxID)
		}
		if id == "" {
			id = contentID(m)
		}
		base[i] = id
	}
	return base
}

// contentID hashes what stays the same across redeliveries. Every field is
// length-prefixed and typed, so no two different messages encode alike.
func contentID(m Message) string {
	h := sha256.New()
	writeBytes(h, m.Body)
	p := m.Properties // Expiration is dropped by dead-lettering, so it is left out
	for _, s := range []string{p.CorrelationID, p.ContentType, p.ContentEncoding, p.Type, p.AppID, p.UserID, p.ReplyTo} {
		writeBytes(h, []byte(s))
	}
	writeValue(h, p.Timestamp)
	writeValue(h, int64(p.Priority))
	writeValue(h, int64(p.DeliveryMode))
	stable := Headers{}
	for k, v := range m.Headers {
		if !volatileHeader(k) {
			stable[k] = v
		}
	}
	writeValue(h, stable)
	sum := h.Sum(nil)
	return "sha256:" + hex.EncodeToString(sum[:16])
}

func writeBytes(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// writeValue is a canonical encoding of a header value: a type tag, then the
// value; tables in sorted key order. Integer and float types each collapse to
// one form, so the same header read from AMQP or from a snapshot file hashes
// alike.
func writeValue(h hash.Hash, v any) {
	tag := func(t byte) { h.Write([]byte{t}) }
	num := func(u uint64) {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], u)
		h.Write(b[:])
	}
	switch x := v.(type) {
	case nil:
		tag('n')
	case string:
		tag('s')
		writeBytes(h, []byte(x))
	case []byte:
		tag('s') // a snapshot may give back as text what AMQP gave as bytes
		writeBytes(h, x)
	case bool:
		tag('b')
		if x {
			tag(1)
		} else {
			tag(0)
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 { // JSON turns ints into floats
			tag('i')
			num(uint64(int64(x)))
			return
		}
		tag('f')
		num(math.Float64bits(x))
	case float32:
		writeValue(h, float64(x))
	case time.Time: // seconds and nanoseconds apart: UnixNano is undefined outside 1678-2262
		tag('t')
		num(uint64(x.Unix()))
		num(uint64(x.Nanosecond()))
	case Headers:
		tag('m')
		num(uint64(len(x)))
		for _, k := range sortedKeys(x) {
			writeBytes(h, []byte(k))
			writeValue(h, x[k])
		}
	case map[string]any:
		writeValue(h, Headers(x))
	default:
		if list, ok := listOf(v); ok {
			tag('l')
			num(uint64(len(list)))
			for _, e := range list {
				writeValue(h, e)
			}
			return
		}
		if m, ok := mapOf(v); ok {
			writeValue(h, m)
			return
		}
		if n, ok := intOf(v); ok {
			tag('i')
			num(uint64(n))
			return
		}
		tag('?') // an unknown type: only its presence counts
	}
}

// BodySHA256 is the hex SHA-256 of a message body: how a decision (an
// approved proposal, an edit's revision) names the content it was made
// on, so it never acts on another message that took the same id.
func BodySHA256(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}
