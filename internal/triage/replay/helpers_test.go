package replay

import (
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// Message builders shared by the replay tests; core triage's tests have
// the same ones (a test package cannot import another's).

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// xdeath builds one x-death entry the way the broker package hands it over.
func xdeath(queue, reason string, count int64, when time.Time, exchange string, keys ...string) triage.Headers {
	rk := make([]any, len(keys))
	for i, k := range keys {
		rk[i] = k
	}
	return triage.Headers{"queue": queue, "reason": reason, "count": count, "time": when, "exchange": exchange, "routing-keys": rk}
}

// deathList is an x-death value.
func deathList(entries ...triage.Headers) any {
	list := make([]any, len(entries))
	for i, e := range entries {
		list[i] = e
	}
	return list
}
