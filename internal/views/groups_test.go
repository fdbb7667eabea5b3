package views

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
)

// TestReadingSaysWhatItIsDoing: every stage of a browse names the queue and
// a number or an action, so the screen never shows a bare "reading 0".
func TestReadingSaysWhatItIsDoing(t *testing.T) {
	g := NewGroups(testContext())
	g.SetSize(80, 10)
	g.Open("legacy.events.failed")
	g.StartLoading()
	for _, c := range []struct {
		read, expect int
		want         string
	}{
		{0, 0, "reading legacy.events.failed: asking the broker…"},
		{5, 0, "reading legacy.events.failed: 5 messages so far…"},
		{0, 8, "reading legacy.events.failed: 0 / 8 messages…"},
		{1, 1, "reading legacy.events.failed: 1 / 1 message…"},
	} {
		g.SetProgress(c.read, c.expect)
		if got := g.View(); !strings.Contains(got, c.want) {
			t.Errorf("read %d of %d: screen lacks %q:\n%s", c.read, c.expect, c.want, got)
		}
	}
}

// A browse that waits for the broker to return an earlier read's messages
// says so, and stops saying so once it reads.
func TestReadingSaysItWaitsForTheBrokerToReturnAnEarlierRead(t *testing.T) {
	g := NewGroups(testContext())
	g.SetSize(120, 10)
	g.Open("orders.dlq")
	g.StartLoading()
	g.SetReturning(951753)
	want := "reading orders.dlq: waiting for the broker to return 951,753 messages of an earlier read…"
	if got := g.View(); !strings.Contains(got, want) {
		t.Errorf("screen lacks %q:\n%s", want, got)
	}
	g.SetProgress(0, 1000000)
	if got := g.View(); strings.Contains(got, "waiting") || !strings.Contains(got, "0 / 1,000,000 messages") {
		t.Errorf("reading, the screen still waits or lacks the count:\n%s", got)
	}
}

// TestGroupsShowTheirOwner: with owners configured the groups screen has an
// owner column naming each group's team, and a dash for an unowned one.
func TestGroupsShowTheirOwner(t *testing.T) {
	ctx := testContext()
	ctx.Owner = func(queue string, g triage.Group) string {
		if len(g.EventTypes) > 0 && g.EventTypes[0] == "shipment.created" {
			return "shipping"
		}
		return ""
	}
	g := NewGroups(ctx)
	g.SetSize(120, 10)
	g.Open("shipping.parking")
	g.SetInspection(&triage.Inspection{Groups: []triage.Group{
		{Reason: triage.ReasonRejected, ReasonCode: "bad_address", Count: 2, EventTypes: []string{"shipment.created"}},
		{Reason: triage.ReasonExpired, Count: 1, EventTypes: []string{"other.thing"}},
	}})
	view := g.View()
	if !strings.Contains(view, "owner") {
		t.Fatalf("no owner column:\n%s", view)
	}
	var shipping, other string
	for _, line := range strings.Split(ansi.Strip(view), "\n") {
		switch {
		case strings.Contains(line, "bad_address"):
			shipping = line
		case strings.Contains(line, "other.thing"):
			other = line
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(shipping), "shipping") || !strings.HasSuffix(strings.TrimSpace(other), "-") {
		t.Errorf("owner cells wrong:\nshipping row %q\nother row %q", shipping, other)
	}
}

// TestReadingSaysItsRateAndTimeLeft: past half a second the progress line
// gives the read's speed and, with a total, how long it still needs.
func TestReadingSaysItsRateAndTimeLeft(t *testing.T) {
	ctx := testContext()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ctx.Now = func() time.Time { return now }
	g := NewGroups(ctx)
	g.SetSize(120, 10)
	g.Open("orders.dlq")
	g.StartLoading()
	g.SetProgress(100, 1000)
	if got := g.View(); strings.Contains(got, "/s") {
		t.Errorf("a rate at once:\n%s", got)
	}
	now = now.Add(2 * time.Second)
	g.SetProgress(40000, 100000)
	if got := g.View(); !strings.Contains(got, "40,000 / 100,000 messages… 20,000/s, 3s left") {
		t.Errorf("no rate or time left:\n%s", got)
	}
}

// TestLiveGroupsShowWhileTheFirstReadGoesOn: the groups of what a first
// browse read so far are listed, counted as such, and cannot be opened;
// the full read replaces them, and a failed read drops them.
func TestLiveGroupsShowWhileTheFirstReadGoesOn(t *testing.T) {
	g := NewGroups(testContext())
	g.SetSize(120, 10)
	g.Open("orders.dlq")
	g.StartLoading()
	g.SetProgress(3, 10)
	g.SetLive(&triage.Inspection{Batch: triage.Batch{Read: 3}, Groups: []triage.Group{{Reason: triage.ReasonRejected, ReasonCode: "E1", Count: 3}}})
	if got := g.View(); !strings.Contains(got, "3 of 10 messages read so far, 1 group") || !strings.Contains(got, "E1") {
		t.Errorf("no live groups:\n%s", got)
	}
	if g.Inspection() != nil {
		t.Error("a partial read can be opened")
	}
	g.SetFailed()
	if got := g.View(); strings.Contains(got, "E1") || g.Inspection() != nil {
		t.Errorf("a failed read leaves its partial groups:\n%s", got)
	}
}
