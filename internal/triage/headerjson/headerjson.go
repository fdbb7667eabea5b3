// Package headerjson writes triage.Headers as JSON that reads back to the
// same Go values: the snapshot file and the TUI's spill store both use it.
//
// Each value is tagged with its type, so that what JSON would blur comes
// back as it was: {"int":"3"} vs {"float":3}, {"time":"..."} and
// {"bytes":"base64"} vs {"str":"..."}, {"table":{...}} vs a map. Integers
// are strings so no reader rounds them through float64. A string that is
// not valid UTF-8 (an AMQP longstr is bytes) is {"str64":"base64"}, since
// encoding/json would replace its bad bytes. A key that is not valid UTF-8
// (an AMQP shortstr is bytes too) is written as keyPrefix and its bytes in
// base64, and so is a key that begins with keyPrefix, so that every key
// reads back as it was. The same tagging covers queue and binding
// arguments.
package headerjson

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dlqt/dlqt/internal/triage"
)

// keyPrefix marks a key written in base64 (see the package comment): a
// NUL, which no header name a person typed begins with, and a word.
const keyPrefix = "\x00b64:"

// tagKey is the JSON object key that stands for header key k.
func tagKey(k string) string {
	if utf8.ValidString(k) && !strings.HasPrefix(k, keyPrefix) {
		return k
	}
	return keyPrefix + base64.StdEncoding.EncodeToString([]byte(k))
}

// untagKey reverses tagKey.
func untagKey(k string) (string, error) {
	enc, ok := strings.CutPrefix(k, keyPrefix)
	if !ok {
		return k, nil
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", fmt.Errorf("header key %q: %w", k, err)
	}
	return string(b), nil
}

// Tag returns h with every key and value tagged, ready for encoding/json.
func Tag(h triage.Headers) map[string]any {
	if h == nil {
		return nil
	}
	out := make(map[string]any, len(h))
	for k, v := range h {
		out[tagKey(k)] = tagValue(v)
	}
	return out
}

// Untag reverses Tag on what encoding/json decoded (with UseNumber) into a
// Headers field.
func Untag(raw triage.Headers) (triage.Headers, error) { return untagHeaders(raw) }

func tagValue(v any) map[string]any {
	switch v := v.(type) {
	case nil:
		return map[string]any{"null": true}
	case string:
		if !utf8.ValidString(v) {
			return map[string]any{"str64": base64.StdEncoding.EncodeToString([]byte(v))}
		}
		return map[string]any{"str": v}
	case bool:
		return map[string]any{"bool": v}
	case int64:
		return map[string]any{"int": strconv.FormatInt(v, 10)}
	case int:
		return map[string]any{"int": strconv.Itoa(v)}
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return map[string]any{"float": strconv.FormatFloat(v, 'g', -1, 64)}
		}
		return map[string]any{"float": v}
	case time.Time:
		return map[string]any{"time": json.RawMessage(triage.AppendTimeJSON(nil, v.UTC()))}
	case []byte:
		return map[string]any{"bytes": base64.StdEncoding.EncodeToString(v)}
	case []any:
		list := make([]any, len(v))
		for i, e := range v {
			list[i] = tagValue(e)
		}
		return map[string]any{"list": list}
	case triage.Headers:
		return map[string]any{"table": Tag(v)}
	case map[string]any:
		return map[string]any{"table": Tag(v)}
	default:
		// Not a value triage.Headers allows; keep its text rather than fail.
		return map[string]any{"str": fmt.Sprint(v)}
	}
}

func untagHeaders(raw triage.Headers) (triage.Headers, error) {
	if raw == nil {
		return nil, nil
	}
	out := make(triage.Headers, len(raw))
	for tagged, v := range raw {
		k, err := untagKey(tagged)
		if err != nil {
			return nil, err
		}
		val, err := untagValue(v)
		if err != nil {
			return nil, fmt.Errorf("header %q: %w", k, err)
		}
		out[k] = val
	}
	return out, nil
}

func untagValue(v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return nil, fmt.Errorf("want one {type: value} pair, got %v", v)
	}
	for tag, x := range m {
		decode, known := untaggers[tag]
		if !known {
			return nil, fmt.Errorf("unknown value type %q", tag)
		}
		val, ok, err := decode(x)
		if err != nil || ok {
			return val, err
		}
		return nil, fmt.Errorf("bad %s value %v", tag, x)
	}
	panic("unreachable")
}

// untaggers decode the value of each tag tagValue writes; ok is false when
// the JSON value has the wrong shape for its tag.
var untaggers map[string]func(x any) (val any, ok bool, err error)

func init() {
	untaggers = map[string]func(any) (any, bool, error){
		"null": func(any) (any, bool, error) { return nil, true, nil },
		"str":  func(x any) (any, bool, error) { s, ok := x.(string); return s, ok, nil },
		"str64": func(x any) (any, bool, error) {
			return fromString(x, func(s string) (any, error) {
				b, err := base64.StdEncoding.DecodeString(s)
				return string(b), err
			})
		},
		"bool": func(x any) (any, bool, error) { b, ok := x.(bool); return b, ok, nil },
		"int": func(x any) (any, bool, error) {
			return fromString(x, func(s string) (any, error) { return strconv.ParseInt(s, 10, 64) })
		},
		"float": untagFloat,
		"time":  untagTime,
		"bytes": func(x any) (any, bool, error) {
			return fromString(x, func(s string) (any, error) { return base64.StdEncoding.DecodeString(s) })
		},
		"list": untagList,
		"table": func(x any) (any, bool, error) {
			t, ok := x.(map[string]any)
			if !ok {
				return nil, false, nil
			}
			h, err := untagHeaders(triage.Headers(t))
			return h, true, err
		},
	}
}

// untagTime reads a time as RFC 3339, or (past the year 9999, which RFC
// 3339 cannot write) as Unix seconds, a number (triage.AppendTimeJSON).
func untagTime(x any) (any, bool, error) {
	if n, ok := x.(json.Number); ok {
		t, err := triage.ParseTimeJSON([]byte(n))
		return t, true, err
	}
	return fromString(x, func(s string) (any, error) {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil { // written by a dlqt that kept years past 9999 as text
			return "timestamp out of range: " + s, nil
		}
		return t.UTC(), nil
	})
}

func fromString(x any, parse func(string) (any, error)) (any, bool, error) {
	s, ok := x.(string)
	if !ok {
		return nil, false, nil
	}
	v, err := parse(s)
	return v, true, err
}

func untagFloat(x any) (any, bool, error) {
	switch f := x.(type) {
	case json.Number:
		v, err := f.Float64()
		return v, true, err
	case string:
		v, err := strconv.ParseFloat(f, 64)
		return v, true, err
	}
	return nil, false, nil
}

func untagList(x any) (any, bool, error) {
	l, ok := x.([]any)
	if !ok {
		return nil, false, nil
	}
	out := make([]any, len(l))
	for i, e := range l {
		val, err := untagValue(e)
		if err != nil {
			return nil, true, fmt.Errorf("[%d]: %w", i, err)
		}
		out[i] = val
	}
	return out, true, nil
}

// AppendTagged appends the JSON of Tag(h) to dst without building it: the
// same document json.Marshal(Tag(h)) writes (keys sorted, HTML left
// unescaped), which Untag reads back, at a fraction of the cost.
func AppendTagged(dst []byte, h triage.Headers) []byte {
	if h == nil {
		return append(dst, "null"...)
	}
	keys := make([][2]string, 0, len(h)) // as written, as held
	for k := range h {
		keys = append(keys, [2]string{tagKey(k), k})
	}
	slices.SortFunc(keys, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k[0])
		dst = append(dst, ':')
		dst = appendValue(dst, h[k[1]])
	}
	return append(dst, '}')
}

func appendValue(dst []byte, v any) []byte {
	tagged := func(tag string) []byte {
		dst = append(dst, `{"`...)
		dst = append(dst, tag...)
		return append(dst, `":`...)
	}
	switch v := v.(type) {
	case nil:
		return append(tagged("null"), "true}"...)
	case string:
		if !utf8.ValidString(v) {
			dst = appendString(tagged("str64"), base64.StdEncoding.EncodeToString([]byte(v)))
		} else {
			dst = appendString(tagged("str"), v)
		}
	case bool:
		dst = strconv.AppendBool(tagged("bool"), v)
	case int64:
		dst = append(strconv.AppendInt(append(tagged("int"), '"'), v, 10), '"')
	case int:
		dst = append(strconv.AppendInt(append(tagged("int"), '"'), int64(v), 10), '"')
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			dst = appendString(tagged("float"), strconv.FormatFloat(v, 'g', -1, 64))
		} else {
			dst = strconv.AppendFloat(tagged("float"), v, 'g', -1, 64)
		}
	case time.Time:
		dst = triage.AppendTimeJSON(tagged("time"), v.UTC())
	case []byte:
		dst = appendString(tagged("bytes"), base64.StdEncoding.EncodeToString(v))
	case []any:
		dst = append(tagged("list"), '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, e)
		}
		dst = append(dst, ']')
	case triage.Headers:
		dst = AppendTagged(tagged("table"), v)
	case map[string]any:
		dst = AppendTagged(tagged("table"), v)
	default:
		dst = appendString(tagged("str"), strings.ToValidUTF8(fmt.Sprint(v), "\ufffd"))
	}
	return append(dst, '}')
}

// appendString appends s as a JSON string; bytes that are not UTF-8 become
// U+FFFD, as encoding/json writes them (neither keys nor values have any:
// see tagKey and str64).
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, r := range strings.ToValidUTF8(s, "\ufffd") {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}
