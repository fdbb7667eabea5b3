package triage

import (
	"encoding/json"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Header values come from the broker, from snapshot files and from whatever
// an application chose to put there, so every reader here accepts several
// shapes and reports false instead of guessing.

// findHeader returns a header by name. Names are case-sensitive in AMQP, but
// frameworks and proxies disagree on case, so a case-insensitive match is
// used when there is no exact one (the smallest such name, for determinism).
func findHeader(h Headers, key string) (any, bool) {
	if v, ok := h[key]; ok {
		return v, true
	}
	found := ""
	var val any
	ok := false
	for k, v := range h {
		// Names dlqt looks for are ASCII, whose case folding keeps the length.
		if len(k) == len(key) && strings.EqualFold(k, key) && (!ok || k < found) {
			found, val, ok = k, v, true
		}
	}
	return val, ok
}

// textOf reads a string-like value; numbers are rendered as their text,
// since applications put codes and ids in headers as either.
func textOf(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	case json.Number:
		return x.String(), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", false
		}
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case float32:
		return textOf(float64(x))
	}
	if n, ok := intOf(v); ok { // integer types only: the rest are handled above
		return strconv.FormatInt(n, 10), true
	}
	return "", false
}

// headerText is a header's text, sanitised to one line and trimmed.
func headerText(h Headers, key string) string {
	v, ok := findHeader(h, key)
	if !ok {
		return ""
	}
	s, ok := textOf(v)
	if !ok {
		return ""
	}
	return strings.TrimSpace(sanitize.Line(strings.TrimSpace(s)))
}

// intOf reads any integer type, a finite float (truncated) or a numeric
// string. Values outside int64 are clamped.
func intOf(v any) (int64, bool) {
	if n, ok := integerOf(v); ok {
		return n, true
	}
	switch x := v.(type) {
	case float32:
		return intOfFloat(float64(x))
	case float64:
		return intOfFloat(x)
	case json.Number:
		return intOfText(string(x))
	case []byte:
		return intOfText(string(x))
	case string:
		return intOfText(x)
	}
	return 0, false
}

// integerOf reads the Go integer types amqp091-go decodes field values into.
func integerOf(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		return clampUint(uint64(x)), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return clampUint(x), true
	}
	return 0, false
}

func intOfFloat(x float64) (int64, bool) {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return 0, false
	case x >= math.MaxInt64:
		return math.MaxInt64, true
	case x <= math.MinInt64:
		return math.MinInt64, true
	}
	return int64(x), true
}

func intOfText(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return intOfFloat(f)
	}
	return 0, false
}

func clampUint(u uint64) int64 {
	if u > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(u)
}

// Times outside this range are not believed: they come from garbage, and
// encoding/json cannot even marshal a year past 9999.
var (
	earliestTime = time.Unix(0, 0).UTC()
	latestTime   = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// timeOf reads a time: a time.Time, unix seconds (an AMQP timestamp, or
// milli/micro/nanoseconds when the number is too large to be seconds, as a
// JavaScript Date.now() is), or an RFC 3339 string. Result is UTC.
func timeOf(v any) (time.Time, bool) {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case string:
		return parseTime(x)
	case []byte:
		return parseTime(string(x))
	case float64, float32, json.Number:
		f, ok := floatOf(x)
		if !ok {
			return time.Time{}, false
		}
		t = unixTime(f)
	default:
		n, ok := intOf(v)
		if !ok {
			return time.Time{}, false
		}
		t = unixTime(float64(n))
	}
	return believable(t)
}

func floatOf(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case float32:
		return floatOf(float64(x))
	case json.Number:
		f, err := x.Float64()
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

// unixTime scales a number to seconds by its magnitude: 1e11 seconds is the
// year 5138, so anything larger is a finer unit.
func unixTime(f float64) time.Time {
	a := math.Abs(f)
	switch {
	case a >= 1e17:
		f /= 1e9
	case a >= 1e14:
		f /= 1e6
	case a >= 1e11:
		f /= 1e3
	}
	if math.Abs(f) > 1e12 {
		return time.Time{}
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9))
}

func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return believable(t)
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return believable(unixTime(f))
	}
	return time.Time{}, false
}

func believable(t time.Time) (time.Time, bool) {
	if t.IsZero() || t.Before(earliestTime) || t.After(latestTime) {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// mapOf reads a nested table. Named map types (amqp091-go's Table, handed
// over by a caller that skipped the broker's conversion) are accepted too.
func mapOf(v any) (Headers, bool) {
	switch x := v.(type) {
	case Headers:
		return x, x != nil
	case map[string]any:
		return Headers(x), x != nil
	case nil:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String || rv.IsNil() {
		return nil, false
	}
	h := make(Headers, rv.Len())
	for it := rv.MapRange(); it.Next(); {
		h[it.Key().String()] = it.Value().Interface()
	}
	return h, true
}

// listOf reads an array value.
func listOf(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, true
	case []Headers:
		out := make([]any, len(x))
		for i, m := range x {
			out[i] = m
		}
		return out, true
	case []map[string]any:
		out := make([]any, len(x))
		for i, m := range x {
			out[i] = m
		}
		return out, true
	}
	return nil, false
}

// sortedKeys returns the keys of h in byte order.
func sortedKeys(h Headers) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// clipText bounds a display string to max bytes on a rune boundary, marking the cut.
func clipText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// oneLine is the form of every short broker string dlqt shows: sanitised to
// one line, trimmed and bounded.
func oneLine(s string, max int) string {
	return clipText(strings.TrimSpace(sanitize.Line(strings.TrimSpace(s))), max)
}
