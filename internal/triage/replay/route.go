package replay

import (
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// OriginalRoute is triage.OriginalRoute: where t was first published, as
// far as it says.
func OriginalRoute(t triage.Triaged) (triage.Route, bool) { return triage.OriginalRoute(t) }

// CopyHeaders are the headers of a replayed copy of m: all of its own,
// plus the replay id and time, the item id, the best attempt count so far
// (dlqt-attempts) and a copy of x-death (dlqt-deaths), so that a broker that
// resets x-death on the next death (4.x) loses no history. A copy replayed
// again keeps the dlqt-deaths of its first replay when it has no x-death.
// A full scan's mark (dlqt-full-scan) is bookkeeping of the parking queue
// and stays behind: the destination's consumers never see it.
func CopyHeaders(m triage.Message, itemID, replayID string, attempts int, at time.Time) triage.Headers {
	h := make(triage.Headers, len(m.Headers)+5)
	for k, v := range m.Headers {
		h[k] = v
	}
	delete(h, triage.HeaderFullScan)
	h[triage.HeaderReplayID] = replayID
	h[triage.HeaderReplayItem] = itemID
	h[triage.HeaderReplayedAt] = at.UTC().Truncate(time.Second)
	if n, ok := triage.RecordedAttempts(m.Headers); !ok || int64(attempts) > n {
		h[triage.HeaderAttempts] = int64(attempts)
	}
	if d := triage.KeptDeaths(m.Headers); len(d) > 0 {
		h[triage.HeaderDeaths] = d
	}
	return h
}
