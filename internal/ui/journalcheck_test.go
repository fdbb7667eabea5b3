package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// gatedJournal is a real journal whose whole check the test holds: it
// reports 40,000 of 100,000 entries checked, then ends with what the test
// sends on gate.
type gatedJournal struct {
	*journal.Journal
	verified atomic.Bool
	gate     chan error
}

func (g *gatedJournal) Verified() bool { return g.verified.Load() }

func (g *gatedJournal) Verify(progress func(done, total uint64)) error {
	progress(40_000, 100_000)
	err := <-g.gate
	g.verified.Store(err == nil)
	return err
}

// checkingHarness is a live harness whose journal's check has reported
// 40,000 of 100,000 entries and waits; next delivers its end once the
// test sent it on the gate.
func checkingHarness(t *testing.T) (h *harness, g *gatedJournal, next tea.Cmd) {
	t.Helper()
	r := scenario()
	g = &gatedJournal{Journal: openJournal(t), gate: make(chan error, 1)}
	g.verified.Store(true) // the harness runs Init to its end: the test starts the check itself, as Init does
	h = newHarness(t, Options{Reader: r, Journal: g, Host: "bastion", Actions: &Actions{
		Sweeper:    r,
		OpenReplay: func(context.Context, string, string, bool, int) (replay.Port, error) { return nil, nil },
	}}, 160, 40)
	g.verified.Store(false)
	start := h.m.c.startCheck()
	if start == nil {
		t.Fatal("no check started for an unverified journal")
	}
	_, next = h.m.Update(start()) // the progress; next waits for the end
	return h, g, next
}

func TestWritesWaitForTheJournalCheckAndWorkAfterIt(t *testing.T) {
	h, g, next := checkingHarness(t)
	h.mustShow("checking journal: 40,000 of 100,000 entries")
	openInvalidSKU(h)

	h.press("tag")
	if h.m.c.dialog != nil {
		t.Fatalf("tag opened %T while the journal is being checked", h.m.c.dialog)
	}
	h.mustShow("tagging is off: the journal is still being checked (40,000 of 100,000 entries)")
	h.press("discard")
	if h.m.c.dialog != nil {
		t.Fatalf("discard opened %T while the journal is being checked", h.m.c.dialog)
	}
	h.mustShow("discard is off: it is journalled and the journal is still being checked")
	for _, line := range strings.Split(h.screen(), "\n") {
		if strings.HasPrefix(line, "error: discard") && strings.Contains(line, "\n") {
			t.Fatalf("the refusal is not one line: %q", line)
		}
	}
	h.press("journal") // reading is not writing: the journal shows meanwhile
	h.mustShow("checking the chain: 40,000 of 100,000 entries")
	h.press("back")

	g.gate <- nil
	h.run(next)
	h.mustNotShow("checking journal")
	h.press("tag")
	if h.m.c.dialog == nil {
		t.Fatal("tag still refused after the check passed")
	}
	h.typeText("poison")
	h.send(keyPress("enter"))
	tags, err := g.Tags("shop", "orders.dlq", []string{"m-1001"})
	if err != nil || len(tags["m-1001"]) != 1 {
		t.Fatalf("tags after the check: %v, %v", tags, err)
	}
	h.press("discard")
	if h.m.c.dialog == nil {
		t.Fatal("discard still refused after the check passed")
	}
}

func TestADamagedJournalFoundByTheCheckRefusesActions(t *testing.T) {
	h, g, next := checkingHarness(t)
	openInvalidSKU(h)
	damage := &journal.DamagedError{Path: g.Path(), Reason: "journal chain broken at entry 7: hash does not match"}
	g.gate <- damage
	h.run(next)
	h.mustShow("is damaged", "chain broken at entry 7", "JOURNAL DAMAGED: actions off")
	h.press("discard")
	if h.m.c.dialog != nil {
		t.Fatalf("discard opened %T on a damaged journal", h.m.c.dialog)
	}
	h.mustShow("discard is off: it is journalled and journal", "is damaged")
	h.press("tag")
	if h.m.c.dialog != nil {
		t.Fatal("a tag prompt opened on a damaged journal")
	}
	h.mustShow("tagging is off: journal")
	h.press("journal") // as when the open refused it: the journal screen says why
	if h.m.c.focus == screenJournal {
		t.Fatal("the journal screen opened on a damaged journal")
	}
	h.mustShow("journal: journal", "is damaged")
	if es, _ := g.Entries(); len(es) != 0 {
		t.Fatalf("%d entries written to a damaged journal", len(es))
	}
}

// The journal screen reads the newest page, then the older one when the
// selection reaches the end of what it read.
func TestJournalScreenReadsOlderPagesAsItScrolls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := journal.Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	n := journalPage + 44
	for i := range n {
		if _, err := j.Append(journal.Entry{Actor: "ana", Action: triage.ActionTag, Vhost: "shop", Queue: "orders.dlq",
			MessageIDs: []string{fmt.Sprint("m-", i)}, Reason: fmt.Sprint("reason-", i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, Options{Journal: j}, 120, 40)
	h.press("journal")
	h.mustShow("300 entries (newest 256 read)", "chain verified", "reason-300")
	h.mustNotShow("reason-44 ")
	if h.m.journal.Oldest() != 45 {
		t.Fatalf("oldest read %d, want 45", h.m.journal.Oldest())
	}
	h.press("bottom") // to the oldest read: the older page comes, the selection stays
	h.mustShow("300 entries", "› ", "reason-45 ")
	h.mustNotShow("newest")
	h.press("bottom")
	h.mustShow("reason-1 ")
	if h.m.journal.Oldest() != 1 {
		t.Fatalf("oldest read %d after the end, want 1", h.m.journal.Oldest())
	}
	h.press("top")
	h.mustShow("reason-300", "chain verified")
}

// The journal screen's export is journalled too: it waits for the check
// and leaves no file behind meanwhile.
func TestJournalExportWaitsForTheCheck(t *testing.T) {
	h, g, next := checkingHarness(t)
	dir := t.TempDir()
	t.Chdir(dir)
	h.press("journal")
	h.press("export_journal")
	h.mustShow("export: the journal is still being checked")
	if m, _ := filepath.Glob(filepath.Join(dir, "dlqt-journal-*")); len(m) != 0 {
		t.Fatalf("an export before the check: %v", m)
	}
	g.gate <- nil
	h.run(next)
	h.press("export_journal")
	h.mustShow("exported 0 journal entries to " + dir)
}

// The TUI's own journal (a Shared opened unverified) is checked by Init's
// command; once it passed, the journal is written and read as before.
func TestInitChecksAnUnverifiedJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	s, err := journal.OpenSharedUnverified(path, time.Second, journal.Stamp{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var _ Journal = s
	h := newHarness(t, Options{Journal: s}, 120, 40)
	if !s.Verified() || h.m.c.check.running {
		t.Fatal("Init did not check the journal")
	}
	h.mustNotShow("checking journal")
	h.openQueue("orders.dlq")
	h.press("open")
	h.press("tag")
	h.typeText("poison")
	h.send(keyPress("enter"))
	h.press("journal")
	h.mustShow("1 entry", "chain verified", "poison")
}
