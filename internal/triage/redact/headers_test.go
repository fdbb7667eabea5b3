package redact

import (
	"reflect"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage/redact/redacttest"
	"github.com/dlqt/dlqt/internal/triage/sanitize/sanitizetest"
)

// headers is a named table type like triage.Headers: Headers must hand back
// nested tables as the caller's type, whatever type they came in as.
type headers map[string]any

func TestRedactHeaders(t *testing.T) {
	when := time.Date(2026, 11, 30, 9, 41, 0, 0, time.UTC)
	h := headers{
		"authorization":  "Bearer abc",
		"X-Api-Key":      []byte("k-123"),
		"cookie":         "session=abc",
		"x-password-set": false,
		"x-last-error":   "login failed for jane@example.com\n\x1b[2J",
		"x-attempt":      int64(3),
		"x-ratio":        0.5,
		"x-ok":           true,
		"x-at":           when,
		"x-none":         nil,
		"x-blob":         []byte{0x00, 0x01, 0xff},
		"x-text-bytes":   []byte("card 4111 1111 1111 1111"),
		"q\x1b[2J":       "name\u202e",
		"x-death": []any{headers{
			"queue": "orders", "count": int64(2), "time": when,
			"routing-keys": []any{"orders.created", "jane@example.com"},
		}},
		"x-ctx":    map[string]any{"token": "t-1", "user": "bob"},
		"x-secret": headers{"a": "b"},
	}
	orig := deepCopyHeaders(h)

	got, n := Headers(h, New())
	want := headers{
		"authorization":  "[REDACTED]",
		"X-Api-Key":      "[REDACTED]",
		"cookie":         "[REDACTED]",
		"x-password-set": false,
		"x-last-error":   `login failed for j***@example.com\n\x1b[2J`,
		"x-attempt":      int64(3),
		"x-ratio":        0.5,
		"x-ok":           true,
		"x-at":           when,
		"x-none":         nil,
		"x-blob":         "0x0001ff",
		"x-text-bytes":   "card [REDACTED:card ...1111]",
		`q\x1b[2J`:       `name\u202e`,
		"x-death": []any{headers{
			"queue": "orders", "count": int64(2), "time": when,
			"routing-keys": []any{"orders.created", "j***@example.com"},
		}},
		"x-ctx":    headers{"token": "[REDACTED]", "user": "bob"},
		"x-secret": "[REDACTED]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
	if n != 8 {
		t.Errorf("redactions = %d, want 8", n)
	}
	if !reflect.DeepEqual(h, orig) {
		t.Errorf("Headers changed its input:\n%#v", h)
	}
	assertHeadersSafe(t, got)
}

func TestRedactHeadersNil(t *testing.T) {
	if got, n := Headers(headers(nil), New()); got != nil || n != 0 {
		t.Errorf("got %v, %d", got, n)
	}
	got, n := Headers(headers{"authorization": "x\x1b"}, nil)
	if got["authorization"] != `x\x1b` || n != 0 {
		t.Errorf("nil redactor: got %v, %d", got, n)
	}
}

func TestRedactHeadersOtherTypes(t *testing.T) {
	type table map[string]any // what an amqp.Table would be
	h := headers{"t": table{"password": "x"}, "i": int32(7), "l": []string{"a\x1b"}, "s": struct{ A string }{"\x1b"}}
	got, n := Headers(h, New())
	want := headers{"t": headers{"password": "[REDACTED]"}, "i": int32(7), "l": []any{`a\x1b`}, "s": `{\x1b}`}
	if !reflect.DeepEqual(got, want) || n != 1 {
		t.Errorf("got %#v (%d), want %#v", got, n, want)
	}
}

func TestRedactHeadersKeepsKeysThatCollideOnceSanitised(t *testing.T) {
	h := headers{"a\x1b": "esc", `a\x1b`: "text", "a\x1b\x1b": "two"}
	got, _ := Headers(h, nil)
	want := headers{`a\x1b`: "text", `a\x1b (dup)`: "esc", `a\x1b\x1b`: "two"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func TestRedactHeadersMasksSecretKeys(t *testing.T) {
	h := headers{"jane@example.com": "1", "john@example.com": "2", "x-ok": "3"}
	got, n := Headers(h, New())
	want := headers{"j***@example.com": "1", "j***@example.com (dup)": "2", "x-ok": "3"} // sorted: jane before john
	if !reflect.DeepEqual(got, want) || n != 2 {
		t.Errorf("got %#v (%d), want %#v (2)", got, n, want)
	}
}

func deepCopyHeaders(h headers) headers {
	out := headers{}
	for k, v := range h {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch t := v.(type) {
	case headers:
		return deepCopyHeaders(t)
	case map[string]any:
		m := map[string]any{}
		for k, e := range t {
			m[k] = deepCopyValue(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = deepCopyValue(e)
		}
		return l
	case []byte:
		if t == nil {
			return t
		}
		return append([]byte{}, t...)
	}
	return v
}

// assertHeadersSafe fails if any key or string of h could drive a terminal
// or if a raw []byte survived.
func assertHeadersSafe(t testing.TB, h headers) {
	t.Helper()
	for k, v := range h {
		sanitizetest.AssertSafe(t, k, false)
		assertValueSafe(t, v)
	}
}

func assertValueSafe(t testing.TB, v any) {
	t.Helper()
	switch x := v.(type) {
	case string:
		sanitizetest.AssertSafe(t, x, false)
	case []byte:
		t.Fatalf("raw []byte %q left in redacted headers", x)
	case headers:
		assertHeadersSafe(t, x)
	case []any:
		for _, e := range x {
			assertValueSafe(t, e)
		}
	}
}

func FuzzRedactHeaders(f *testing.F) {
	f.Add("authorization", "Bearer "+redacttest.JWT, []byte("x"), "nested", "jane@example.com")
	f.Add("q\x1b[2J", "\u202e\r\n", []byte{0xff, 0x00}, "password", "hunter2")
	f.Add("", "", []byte(nil), "", "")
	r := New()
	f.Fuzz(func(t *testing.T, k1, v1 string, b []byte, k2, v2 string) {
		h := headers{
			k1:       v1,
			"bytes":  b,
			"nested": headers{k2: v2, "list": []any{v1, b, int64(1)}},
			"map":    map[string]any{k2: []any{v2}},
		}
		orig := deepCopyHeaders(h)
		for _, red := range []*Redactor{r, nil} {
			got, n := Headers(h, red)
			if n < 0 || (red == nil && n != 0) {
				t.Fatalf("redactions = %d", n)
			}
			assertHeadersSafe(t, got)
		}
		if !reflect.DeepEqual(h, orig) {
			t.Fatalf("Headers changed its input:\n%#v\n%#v", h, orig)
		}
	})
}
