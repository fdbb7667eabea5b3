package broker

import (
	"fmt"
	"math"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// tableToHeaders converts an AMQP field table into triage.Headers: every
// integer width becomes int64, every float float64, a decimal its float64
// value, nested tables Headers, timestamps UTC time.Time. Byte arrays and
// strings stay apart, so a republished message carries the same values.
func tableToHeaders(t amqp.Table) triage.Headers {
	if t == nil {
		return nil
	}
	h := make(triage.Headers, len(t))
	for k, v := range t {
		h[k] = fieldToValue(v)
	}
	return h
}

func fieldToValue(v any) any {
	switch v := v.(type) {
	case nil, string, bool, int64, float64:
		return v
	case int8:
		return int64(v)
	case int16:
		return int64(v)
	case int32:
		return int64(v)
	case int:
		return int64(v)
	case uint8:
		return int64(v)
	case uint16:
		return int64(v)
	case uint32:
		return int64(v)
	case float32:
		return float64(v)
	case amqp.Decimal:
		return float64(v.Value) / math.Pow10(int(v.Scale))
	case time.Time:
		return timeValue(v)
	case []byte:
		return append([]byte{}, v...)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = fieldToValue(e)
		}
		return out
	case amqp.Table:
		return tableToHeaders(v)
	case map[string]any:
		return tableToHeaders(amqp.Table(v))
	case triage.Headers:
		return tableToHeaders(amqp.Table(v))
	default:
		// amqp091-go decodes nothing else; keep the value rather than lose it.
		return v
	}
}

// timeValue is a delivered AMQP timestamp in UTC, or, for one outside
// years 1-9999 (a broken or hostile publisher), a string saying so:
// encoding/json cannot write such a time and RFC 3339 cannot read it back,
// and triage reads the string as "no time". A replay republishes the
// original timestamp (Replay.deliveredTable).
func timeValue(t time.Time) any {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return outOfRangeTime(t.Unix())
	}
	return t.UTC()
}

func outOfRangeTime(unix int64) string {
	return fmt.Sprintf("timestamp out of range: %d seconds since 1970", unix)
}

// headersToTable is the reverse of tableToHeaders, for republishing a message
// with its original headers: int64 goes out as a long ('l'), float64 as a
// double ('d'), Headers as a nested table. tableToHeaders(headersToTable(h))
// equals h for every value triage.Headers allows.
func headersToTable(h triage.Headers) amqp.Table {
	if h == nil {
		return nil
	}
	t := make(amqp.Table, len(h))
	for k, v := range h {
		t[k] = valueToField(v)
	}
	return t
}

func valueToField(v any) any {
	switch v := v.(type) {
	case triage.Headers:
		return headersToTable(v)
	case map[string]any:
		return headersToTable(triage.Headers(v))
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = valueToField(e)
		}
		return out
	case int:
		return int64(v)
	case time.Time:
		return v.UTC()
	default:
		return v
	}
}
