package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// canonicalJSON appends to dst what json.Marshal writes of the value raw
// decodes to with json.Unmarshal into an any (objects as map[string]any,
// so keys sorted and the last of a repeated key kept; numbers as float64;
// strings as Go strings), without building that value: a replay's plan
// of 500,000 messages decoded so was 343 MB of maps for a moment, to be
// encoded again. Like that round trip it fails on a number a float64
// cannot hold.
func canonicalJSON(dst, raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	out, err := canonicalValue(dst, dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("canonical JSON: data after the value")
	}
	return out, nil
}

func canonicalValue(dst []byte, dec *json.Decoder) ([]byte, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			dst = append(dst, '[')
			for first := true; dec.More(); first = false {
				if !first {
					dst = append(dst, ',')
				}
				if dst, err = canonicalValue(dst, dec); err != nil {
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return append(dst, ']'), nil
		}
		ms, err := canonicalMembers(dec)
		if err != nil {
			return nil, err
		}
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].key < ms[j].key })
		dst = append(dst, '{')
		n := 0
		for i, m := range ms {
			if i+1 < len(ms) && ms[i+1].key == m.key {
				continue // a map keeps the last
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = appendJSON(dst, m.key)
			dst = append(append(dst, ':'), m.val...)
		}
		return append(dst, '}'), nil
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return nil, fmt.Errorf("canonical JSON: number %s: %w", t, err)
		}
		return appendJSON(dst, f), nil
	case string:
		return appendJSON(dst, t), nil
	case bool:
		return appendJSON(dst, t), nil
	case nil:
		return append(dst, "null"...), nil
	}
	return nil, fmt.Errorf("canonical JSON: unexpected token %v", tok)
}

// member is one member of an object, its value as canonical JSON.
type member struct {
	key string
	val []byte
}

// canonicalMembers reads the members of the object whose '{' dec has just
// read, up to and with its '}', in the order written.
func canonicalMembers(dec *json.Decoder) ([]member, error) {
	var ms []member
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		v, err := canonicalValue(nil, dec)
		if err != nil {
			return nil, err
		}
		ms = append(ms, member{k.(string), v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return ms, nil
}

func appendJSON(dst []byte, v any) []byte {
	b, _ := json.Marshal(v) // a string, a float64 or a bool: never fails
	return append(dst, b...)
}

// rawDetail is how large a detail's canonical JSON may be and still be
// decoded back into Go values for the sealed entry; a larger one (a
// plan's items, its ids) stays its canonical bytes, which encode the same.
const rawDetail = 64 << 10

// canonicalDetails is details as they read back from JSON (seal): each
// value decoded again from its canonical JSON, or, past rawDetail, that
// JSON itself (json.RawMessage), which json.Marshal writes unchanged.
func canonicalDetails(details map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(details)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // a map encodes as an object
		return nil, err
	}
	ms, err := canonicalMembers(dec)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(ms))
	for _, m := range ms {
		if len(m.val) > rawDetail {
			out[m.key] = json.RawMessage(m.val)
			continue
		}
		var x any
		if err := json.Unmarshal(m.val, &x); err != nil {
			return nil, err
		}
		out[m.key] = x
	}
	return out, nil
}
