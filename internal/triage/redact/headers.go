package redact

import (
	"encoding/hex"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// maxHeaderBinary bounds how many bytes of a binary header value are shown.
const maxHeaderBinary = 64

// Headers returns a copy of a header table h with secrets masked and strings
// sanitised. h itself is never changed: reading a message must not alter it.
// Secret header names (authorization, x-api-key, cookie, ...) mask their
// whole value; other strings, and []byte that holds text, are redacted by
// shape. Every key and string goes through sanitize.Line. In the copy,
// []byte becomes a string (its text, or "0x" and its hex when binary) so no
// raw bytes reach a screen; numbers, booleans, times and nil are kept as
// they are. Nested tables come back as H too, so a caller's own table type
// (triage.Headers) holds all the way down.
func Headers[H ~map[string]any](h H, r *Redactor) (H, int) {
	if h == nil {
		return nil, 0
	}
	out := make(H, len(h))
	n := 0
	var changed []string
	for k, v := range h {
		if key, _ := headerKey(k, r); key != k {
			changed = append(changed, k)
			continue
		}
		val, c := redactHeader[H](k, v, r)
		out[k] = val
		n += c
	}
	// A key that redaction or sanitising changed may now equal another key
	// ("a\x1b" and `a\x1b`): neither may hide the other, whatever the map order.
	sort.Strings(changed)
	for _, k := range changed {
		key, c := headerKey(k, r)
		n += c
		for {
			if _, taken := out[key]; !taken {
				break
			}
			key += " (dup)"
		}
		val, c := redactHeader[H](k, h[k], r)
		out[key] = val
		n += c
	}
	return out, n
}

// headerKey is how a key is shown: a secret used as a key (an e-mail
// address, a token) is masked like any other string, then sanitised.
func headerKey(k string, r *Redactor) (string, int) {
	key, n := r.Text(k)
	return sanitize.Line(key), n
}

// redactHeader redacts the value of one named field of a table.
func redactHeader[H ~map[string]any](key string, v any, r *Redactor) (any, int) {
	if r == nil {
		return redactHeaderValue[H]("", v, r)
	}
	k := normalizeKey(key)
	if rule, ok := r.normalKeyRule(k); ok && !revealsNothing(v) {
		return maskKeyed(headerSecret(v), rule.Mask), 1
	}
	return redactHeaderValue[H](k, v, r)
}

// redactHeaderValue redacts a value found under the normalised key k (the
// elements of a list share their list's key).
func redactHeaderValue[H ~map[string]any](k string, v any, r *Redactor) (any, int) {
	switch t := v.(type) {
	case nil, bool, float64, time.Time:
		return t, 0
	case int64:
		// A phone number or an SSN sent as a number under its key.
		if r.underAny(k) {
			if s, n := r.value(k, strconv.FormatInt(t, 10)); n > 0 {
				return s, n
			}
		}
		return t, 0
	case string:
		s, n := r.value(k, t)
		return sanitize.Line(s), n
	case []byte:
		if utf8.Valid(t) && !sanitize.IsBinary(t, "") {
			s, n := r.value(k, string(t))
			return sanitize.Line(s), n
		}
		return binaryHeader(t), 0
	case H:
		return Headers(t, r)
	case map[string]any:
		return Headers(H(t), r)
	case []any:
		out := make([]any, len(t))
		n := 0
		for i, e := range t {
			var c int
			out[i], c = redactHeaderValue[H](k, e, r)
			n += c
		}
		return out, n
	}
	return redactOtherValue[H](k, v, r)
}

// redactOtherValue handles what the header table contract does not promise but a
// careless converter might pass: other number types are kept, tables and
// lists of other named types are walked, anything else becomes its
// sanitised text.
func redactOtherValue[H ~map[string]any](k string, v any, r *Redactor) (any, int) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Bool:
		return v, 0
	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String {
			h := make(H, rv.Len())
			for it := rv.MapRange(); it.Next(); {
				h[it.Key().String()] = it.Value().Interface()
			}
			return Headers(h, r)
		}
	case reflect.Slice, reflect.Array:
		list := make([]any, rv.Len())
		for i := range list {
			list[i] = rv.Index(i).Interface()
		}
		return redactHeaderValue[H](k, list, r)
	}
	s, n := r.value(k, fmt.Sprint(v))
	return sanitize.Line(s), n
}

// revealsNothing lists values a secret key keeps: they say whether a
// credential was sent without saying what it was.
func revealsNothing(v any) bool {
	switch t := v.(type) {
	case nil, bool:
		return true
	case string:
		return t == ""
	case []byte:
		return len(t) == 0
	}
	return false
}

func headerSecret(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []byte:
		return string(t)
	}
	return fmt.Sprint(v)
}

func binaryHeader(b []byte) string {
	if len(b) <= maxHeaderBinary {
		return "0x" + hex.EncodeToString(b)
	}
	return fmt.Sprintf("0x%s... (%d bytes)", hex.EncodeToString(b[:maxHeaderBinary]), len(b))
}
