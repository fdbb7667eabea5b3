package views

import (
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/doctor"
)

// clockContext is testContext with a clock the test moves.
func clockContext(now *time.Time) *Context {
	c := testContext()
	c.Keys.Open = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open"))
	c.Now = func() time.Time { return *now }
	return c
}

// TestOldestOfAQueueNotReadSaysHowToKnowIt: no head timestamp and no read
// is "unread" with what a read would cost; an empty queue is "-"; a read
// with no times at all is "?"; a read's death time wins.
func TestOldestOfAQueueNotReadSaysHowToKnowIt(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	classic := triage.ParkingQueue{Queue: triage.Queue{Name: "orders.parking", Type: "classic", Messages: 3}}
	quorum := triage.ParkingQueue{Queue: triage.Queue{Name: "payments.parking", Type: "quorum", Messages: 2,
		DeliveryLimit: 5, DeliveryLimitSet: true}}
	empty := triage.ParkingQueue{Queue: triage.Queue{Name: "audit.parking", Type: "classic"}}
	for _, c := range []struct {
		q          triage.ParkingQueue
		cell, said string
	}{
		{classic, "unread", "oldest not read yet (enter to browse)"},
		{quorum, "unread", "unread: each read counts a delivery here; enter asks first"},
		{empty, "-", ""},
	} {
		q := NewQueues(clockContext(&now))
		q.SetSize(200, 10)
		q.SetBroker(triage.NewBroker("3.10.8", nil))
		q.SetQueues([]triage.ParkingQueue{c.q}, nil)
		if got := q.oldestCell(c.q, time.Time{}, now); got != c.cell {
			t.Errorf("%s: oldest cell %q, want %q", c.q.Name, got, c.cell)
		}
		if got := q.oldestDetail(c.q, now); got != c.said {
			t.Errorf("%s: health says %q, want %q", c.q.Name, got, c.said)
		}
	}

	q := NewQueues(clockContext(&now))
	q.SetSize(200, 10)
	q.SetQueues([]triage.ParkingQueue{classic}, nil)
	none := &triage.Inspection{Messages: make([]triage.Triaged, 3)}
	q.NoteRead(classic.Name, none, AgesOf(none.List()))
	if got := q.oldestDetail(classic, now); got != "oldest unknown (no message carries a time)" {
		t.Errorf("read, no times: %q", got)
	}
	died := make([]triage.Triaged, 3)
	died[1].DiedAt = now.Add(-40 * time.Minute)
	withDeath := &triage.Inspection{Messages: died}
	q.NoteRead(classic.Name, withDeath, AgesOf(withDeath.List()))
	if got := q.oldestDetail(classic, now); got != "oldest 40m (death time)" {
		t.Errorf("read with a death time: %q", got)
	}
}

// TestNumbersSayTheirAgePastTheRefresh: one marker per screen once the
// numbers are older than Fresh, none before.
func TestNumbersSayTheirAgePastTheRefresh(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	ctx := clockContext(&now)
	ctx.Fresh = 5 * time.Second
	q := NewQueues(ctx)
	q.SetSize(120, 10)
	q.SetQueues([]triage.ParkingQueue{{Queue: triage.Queue{Name: "orders.parking", Messages: 3}}}, nil)
	j := NewJournal(ctx)
	j.SetSize(120, 10)
	j.SetEntries([]JournalEntry{{Seq: 1, Action: "tag"}}, nil)
	d := NewDoctor(ctx)
	d.SetSize(120, 20)
	d.SetFindings("shop", []doctor.Finding{{Kind: doctor.KindUnroutable, Severity: doctor.SeverityError, Queue: "orders.q"}})
	if v := ansi.Strip(q.View() + j.View() + d.View()); strings.Contains(v, " · read ") {
		t.Fatalf("fresh numbers marked:\n%s", v)
	}
	now = now.Add(40 * time.Second)
	if v := ansi.Strip(q.View()); !strings.Contains(v, "1 parking queue · read 40s ago") {
		t.Errorf("the queues screen:\n%s", v)
	}
	if v := ansi.Strip(j.View()); !strings.Contains(v, "— 1 entry · read 40s ago") {
		t.Errorf("the journal screen:\n%s", v)
	}
	if v := ansi.Strip(d.View()); !strings.Contains(v, "1 error · read 40s ago") {
		t.Errorf("the doctor screen:\n%s", v)
	}
	q.SetQueues([]triage.ParkingQueue{{Queue: triage.Queue{Name: "orders.parking", Messages: 4}}}, nil)
	if v := ansi.Strip(q.View()); strings.Contains(v, " · read ") {
		t.Errorf("a new read keeps the old age:\n%s", v)
	}
}

// TestTheDeliveryCostWarningIsNeverCutAt80Columns: at 80 columns the
// health line of a quorum queue whose reads count deliveries keeps its
// warning whole, giving up the less important parts first (when the last
// dead letter came, then the growth), then the name, which the table
// below shows whole; each part shown is whole.
func TestTheDeliveryCostWarningIsNeverCutAt80Columns(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	for _, name := range []string{"payments.parking", "payments.settlement.retry-exhausted.parking"} {
		quorum := triage.ParkingQueue{Queue: triage.Queue{Name: name, Type: "quorum", Messages: 2,
			DeliveryLimit: 5, DeliveryLimitSet: true}}
		for _, width := range []int{80, 100, 200} {
			q := NewQueues(clockContext(&now))
			q.SetSize(width, 10)
			q.SetBroker(triage.NewBroker("3.10.8", nil))
			q.SetQueues([]triage.ParkingQueue{quorum}, nil)
			q.trends = map[string]Trend{name: {LastArrival: now.Add(-3 * time.Minute), Growth: 2, GrowthOver: time.Minute}}
			screen := q.View()
			const warning = "each read counts a delivery here; enter asks first"
			if !strings.Contains(screen, warning) {
				t.Errorf("%s at %d columns: the warning is cut:\n%s", name, width, screen)
			}
			for _, l := range strings.Split(screen, "\n") {
				if w := ansi.StringWidth(l); w > width {
					t.Errorf("%s at %d columns: a line of %d cells: %q", name, width, w, l)
				}
				if _, parts, ok := strings.Cut(l, ": "); ok && strings.Contains(l, warning) && strings.Contains(parts, "…") {
					t.Errorf("%s at %d columns: a part of the health line is cut: %q", name, width, l)
				}
			}
			if width == 200 && !strings.Contains(screen, "last dead letter 3m ago") {
				t.Errorf("%s at 200 columns: the last dead letter is left out though there is room:\n%s", name, screen)
			}
		}
	}
}
