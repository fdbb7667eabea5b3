package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// A message replayed on a 4.x broker dies again: x-death starts afresh
// with the new death, and only dlqt-deaths remembers the first ones. A
// second replay keeps both, and the timeline shows both.
func TestReplayedHistorySurvivesAnXDeathReset(t *testing.T) {
	first := mustTime("2026-01-02T03:04:05Z")
	again := mustTime("2026-01-03T00:00:00Z")
	orig := parkedMsg("m", triage.Headers{"x-death": deathList(xdeath("orders", "rejected", 3, first, "orders", "order.created"))}, `{}`)
	copy1 := orig
	copy1.Headers = CopyHeaders(orig, "m", "rp-1", 3, again)

	// What 4.x parks after the copy is rejected again: a fresh x-death.
	reset := triage.Headers{}
	for k, v := range copy1.Headers {
		reset[k] = v
	}
	reset["x-death"] = deathList(xdeath("orders", "rejected", 1, again, "orders", "order.created"))
	parkedAgain := parkedMsg("m", reset, `{}`)

	kept := triage.KeptDeaths(CopyHeaders(parkedAgain, "m", "rp-2", 4, again.Add(time.Hour)))
	if len(kept) != 2 {
		t.Fatalf("dlqt-deaths after a second replay has %d entries, want the reset one and the first: %v", len(kept), kept)
	}

	tl, _ := triage.BuildTimeline(parkedAgain, triage.Envelope{}, triage.ParseDeaths(parkedAgain.Headers), nil)
	var deaths []triage.Event
	for _, e := range tl {
		if e.Kind == triage.EventDeath {
			deaths = append(deaths, e)
		}
	}
	if len(deaths) != 2 || !deaths[0].Time.Equal(first) || deaths[0].Count != 3 || !strings.Contains(deaths[0].Detail, "kept by dlqt") {
		t.Errorf("timeline deaths %+v, want the kept first death (count 3) then the new one", deaths)
	}
	// On <= 3.12 x-death keeps counting: the copy shows no death twice.
	tl, _ = triage.BuildTimeline(copy1, triage.Envelope{}, triage.ParseDeaths(copy1.Headers), nil)
	n := 0
	for _, e := range tl {
		if e.Kind == triage.EventDeath {
			n++
		}
	}
	if n != 1 {
		t.Errorf("a death both in x-death and dlqt-deaths shows %d times", n)
	}
}
