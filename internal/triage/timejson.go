package triage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// An AMQP timestamp (the timestamp property, a header of type T, an
// x-death time) is any uint64 of seconds, so a publisher's bug can carry
// one past the year 9999, which RFC 3339 cannot write: encoding/json fails
// on such a time.Time and took the whole snapshot or messages --json with
// it. Times in RFC 3339's range are written as before; the others as their
// Unix seconds, a JSON number ("253402300800", with a fraction when there
// is one), which reads back to the same instant.

// TimeInRFC3339 says whether t can be written as RFC 3339.
func TimeInRFC3339(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 0 && y <= 9999
}

// AppendTimeJSON appends t as JSON: an RFC 3339 string in range (in t's
// zone, byte for byte what encoding/json writes), else its Unix seconds as
// a number.
func AppendTimeJSON(dst []byte, t time.Time) []byte {
	if TimeInRFC3339(t) {
		dst = append(dst, '"')
		dst = t.AppendFormat(dst, time.RFC3339Nano) // as time.Time's MarshalJSON: journalled hashes stay
		return append(dst, '"')
	}
	sec, ns := t.Unix(), int64(t.Nanosecond())
	if ns == 0 {
		return strconv.AppendInt(dst, sec, 10)
	}
	if sec < 0 { // -4.5 s is Unix -5 and 500,000,000 ns
		sec, ns = sec+1, 1e9-ns
		dst = append(dst, '-')
	}
	dst = strconv.AppendInt(dst, max(sec, -sec), 10)
	frac := strconv.AppendInt(nil, 1e9+ns, 10)[1:] // nine digits
	return append(append(dst, '.'), bytes.TrimRight(frac, "0")...)
}

// ParseTimeJSON reads what AppendTimeJSON wrote (and what encoding/json
// writes of a time.Time); null and "" are the zero time.
func ParseTimeJSON(data []byte) (time.Time, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return time.Time{}, nil
	}
	if data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil || s == "" {
			return time.Time{}, err
		}
		return time.Parse(time.RFC3339Nano, s)
	}
	return unixSecondsTime(string(data))
}

// unixSecondsTime reads "seconds[.fraction]".
func unixSecondsTime(s string) (time.Time, error) {
	secs, frac, _ := strings.Cut(s, ".")
	sec, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("a time as Unix seconds: %w", err)
	}
	var ns int64
	if frac != "" {
		if len(frac) > 9 {
			return time.Time{}, fmt.Errorf("a time as Unix seconds: %q has more than nine decimals", s)
		}
		if ns, err = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64); err != nil {
			return time.Time{}, fmt.Errorf("a time as Unix seconds: %w", err)
		}
		if strings.HasPrefix(secs, "-") {
			ns = -ns
		}
	}
	return time.Unix(sec, ns).UTC(), nil
}

// timeJSON is a time field written by AppendTimeJSON; the zero time is
// omitted (nil), as omitzero does. A struct whose time is in range is
// written as before, byte for byte; past it, the time field comes last.
func timeJSON(t time.Time) json.RawMessage {
	if t.IsZero() {
		return nil
	}
	return AppendTimeJSON(nil, t)
}

// MarshalJSON writes Timestamp as AppendTimeJSON does.
func (p Properties) MarshalJSON() ([]byte, error) {
	type plain Properties
	if TimeInRFC3339(p.Timestamp) { // as encoding/json writes it, fields in order
		return marshalAsIs(plain(p))
	}
	return marshalAsIs(struct {
		plain
		Timestamp json.RawMessage `json:"timestamp,omitempty"`
	}{plain(p), timeJSON(p.Timestamp)})
}

// UnmarshalJSON reads Timestamp as ParseTimeJSON does.
func (p *Properties) UnmarshalJSON(data []byte) error {
	type plain Properties
	in := struct {
		*plain
		Timestamp json.RawMessage `json:"timestamp,omitempty"`
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	var err error
	p.Timestamp, err = ParseTimeJSON(in.Timestamp)
	return err
}

// MarshalJSON writes Time as AppendTimeJSON does.
func (d Death) MarshalJSON() ([]byte, error) {
	type plain Death
	if TimeInRFC3339(d.Time) { // as encoding/json writes it, fields in order
		return marshalAsIs(plain(d))
	}
	return marshalAsIs(struct {
		plain
		Time json.RawMessage `json:"time,omitempty"`
	}{plain(d), timeJSON(d.Time)})
}

// UnmarshalJSON reads Time as ParseTimeJSON does.
func (d *Death) UnmarshalJSON(data []byte) error {
	type plain Death
	in := struct {
		*plain
		Time json.RawMessage `json:"time,omitempty"`
	}{plain: (*plain)(d)}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	var err error
	d.Time, err = ParseTimeJSON(in.Time)
	return err
}

// MarshalJSON writes Time as AppendTimeJSON does.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	if TimeInRFC3339(e.Time) { // as encoding/json writes it, fields in order
		return marshalAsIs(plain(e))
	}
	return marshalAsIs(struct {
		plain
		Time json.RawMessage `json:"time,omitempty"`
	}{plain(e), timeJSON(e.Time)})
}

// UnmarshalJSON reads Time as ParseTimeJSON does.
func (e *Event) UnmarshalJSON(data []byte) error {
	type plain Event
	in := struct {
		*plain
		Time json.RawMessage `json:"time,omitempty"`
	}{plain: (*plain)(e)}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	var err error
	e.Time, err = ParseTimeJSON(in.Time)
	return err
}

// MarshalJSON writes HeadPublished (the head message's timestamp
// property) as AppendTimeJSON does.
func (q Queue) MarshalJSON() ([]byte, error) {
	type plain Queue
	if TimeInRFC3339(q.HeadPublished) { // as encoding/json writes it, fields in order
		return marshalAsIs(plain(q))
	}
	return marshalAsIs(struct {
		plain
		HeadPublished json.RawMessage `json:"head_published,omitempty"`
	}{plain(q), timeJSON(q.HeadPublished)})
}

// UnmarshalJSON reads HeadPublished as ParseTimeJSON does.
func (q *Queue) UnmarshalJSON(data []byte) error {
	type plain Queue
	in := struct {
		*plain
		HeadPublished json.RawMessage `json:"head_published,omitempty"`
	}{plain: (*plain)(q)}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	var err error
	q.HeadPublished, err = ParseTimeJSON(in.HeadPublished)
	return err
}

// MarshalJSON writes the headers as encoding/json does, but a time value
// as AppendTimeJSON does (nested tables and arrays too).
func (h Headers) MarshalJSON() ([]byte, error) {
	if h == nil {
		return []byte("null"), nil
	}
	return marshalAsIs(jsonSafeTimes(h))
}

// marshalAsIs is json.Marshal without HTML escaping: the encoder that
// called a MarshalJSON escapes the result again if it escapes at all, but
// cannot undo an escape (messages --json writes <, > and & as they are).
func marshalAsIs(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// jsonSafeTimes is v with every time.Time a jsonTime; tables come back as
// map[string]any so their MarshalJSON does not run again.
func jsonSafeTimes(v any) any {
	switch v := v.(type) {
	case time.Time:
		return jsonTime(v)
	case Headers:
		return jsonSafeTimes(map[string]any(v))
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = jsonSafeTimes(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonSafeTimes(e)
		}
		return out
	}
	return v
}

type jsonTime time.Time

func (t jsonTime) MarshalJSON() ([]byte, error) { return AppendTimeJSON(nil, time.Time(t)), nil }
