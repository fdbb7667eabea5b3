package triage

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// unsafeText reports the first rune that must never reach a terminal.
func unsafeText(s string) (rune, bool) {
	if !utf8.ValidString(s) {
		return utf8.RuneError, true
	}
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || sanitize.UnsafeRune(r) {
			return r, true
		}
	}
	return 0, false
}

// assertClean fails when any string reachable from v (structs, slices,
// pointers) carries a control character, escape or bidi override.
func assertClean(t testing.TB, what string, v any) {
	t.Helper()
	walkStrings(reflect.ValueOf(v), func(s string) {
		if r, bad := unsafeText(s); bad {
			t.Fatalf("%s: unsafe rune %U in %q", what, r, s)
		}
	})
}

func walkStrings(v reflect.Value, f func(string)) {
	switch v.Kind() {
	case reflect.String:
		f(v.String())
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) || v.Type() == reflect.TypeOf(Message{}) {
			return // raw messages are kept untouched on purpose
		}
		for i := 0; i < v.NumField(); i++ {
			walkStrings(v.Field(i), f)
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			walkStrings(v.Index(i), f)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkStrings(v.Elem(), f)
		}
	}
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// xdeath builds one x-death entry the way the broker package hands it over.
func xdeath(queue, reason string, count int64, when time.Time, exchange string, keys ...string) Headers {
	rk := make([]any, len(keys))
	for i, k := range keys {
		rk[i] = k
	}
	return Headers{"queue": queue, "reason": reason, "count": count, "time": when, "exchange": exchange, "routing-keys": rk}
}

func deathsHeader(entries ...Headers) Headers {
	list := make([]any, len(entries))
	for i, e := range entries {
		list[i] = e
	}
	return Headers{"x-death": list}
}

func abbrev(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return strings.ReplaceAll(s, "\n", `\n`)
}

// timelineOf is the timeline of a message with no redactor: the tests that
// use it are about order, times and details, not secrets.
func timelineOf(m Message, env Envelope, deaths []Death) []Event {
	ev, _ := BuildTimeline(m, env, deaths, nil)
	return ev
}
