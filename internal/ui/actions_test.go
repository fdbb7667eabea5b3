package ui

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// Sweep makes fakeReader a triage.Sweeper: it holds the queue's messages,
// lets choose pick and removes exactly the picked ones, like the broker's
// sweep (whose own tests run on the real broker).
func (f *fakeReader) Sweep(_ context.Context, queue string, opts triage.BrowseOptions, choose func([]triage.Message) []int) (triage.SweepResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	held := f.messages[queue]
	if opts.Limit > 0 && len(held) > opts.Limit {
		held = held[:opts.Limit]
	}
	picks := choose(slices.Clone(held))
	var kept []triage.Message
	for i, m := range f.messages[queue] {
		if !slices.Contains(picks, i) {
			kept = append(kept, m)
		}
	}
	f.messages[queue] = kept
	return triage.SweepResult{Held: len(held), Taken: picks}, nil
}

func (f *fakeReader) ids(queue string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, m := range f.messages[queue] {
		out = append(out, m.Properties.MessageID)
	}
	return out
}

func openJournal(t testing.TB) *journal.Journal {
	t.Helper()
	j, err := journal.Open(filepath.Join(t.TempDir(), "journal.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// liveHarness is a harness with the write side on: the fake reader sweeps,
// the journal is real.
func liveHarness(t testing.TB, w, h int) (*harness, *journal.Journal) {
	t.Helper()
	r := scenario()
	j := openJournal(t)
	hs := newHarness(t, Options{Reader: r, Journal: j, Host: "bastion", Actions: &Actions{
		Sweeper:    r,
		OpenReplay: func(context.Context, string, string, bool, int) (replay.Port, error) { return nil, nil },
	}}, w, h)
	return hs, j
}

func openInvalidSKU(h *harness) {
	h.openQueue("orders.dlq")
	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	h.press("open")
}

func TestDiscardOfMarkedMessagesAsksAReasonThenConfirms(t *testing.T) {
	h, j := liveHarness(t, 120, 40)
	openInvalidSKU(h)
	h.press("mark") // m-1001, the cursor moves on
	h.press("down") // skip m-1002
	h.press("mark") // m-1003
	h.mustShow("2 marked", "* m-1001", "* m-1003")

	h.press("discard")
	if _, ok := h.m.c.dialog.(*reasonPrompt); !ok {
		t.Fatalf("no reason prompt, dialog = %T", h.m.c.dialog)
	}
	h.mustShow("Discard 2 messages from orders.dlq", "2 marked messages")
	h.press("open") // an empty reason
	if _, ok := h.m.c.dialog.(*reasonPrompt); !ok {
		t.Fatalf("an empty reason moved on to %T", h.m.c.dialog)
	}
	h.mustShow("refused: a reason is required")
	h.send(keyPress("space"))
	h.press("open") // blank is empty too
	h.mustShow("refused: a reason is required")

	// every key is text here: q, x, R, J, y would quit or act elsewhere
	h.typeText("fixed upstream qxRJy")
	if h.quit {
		t.Fatal("typing q in the reason quit")
	}
	h.press("open")
	d, ok := h.m.c.dialog.(*discardConfirm)
	if !ok {
		t.Fatalf("no confirmation, dialog = %T", h.m.c.dialog)
	}
	if !slices.Equal(d.tg.ids, []string{"m-1001", "m-1003"}) {
		t.Fatalf("confirmation for %v", d.tg.ids)
	}
	h.mustShow("Discard for good?", "2 messages (2 marked messages)", "from      orders.dlq", "reason    fixed upstream qxRJy")
	if es, _ := j.Entries(); len(es) != 0 {
		t.Fatalf("the journal has %d entries before the confirmation", len(es))
	}

	h.press("confirm")
	if got := h.reader.ids("orders.dlq"); !slices.Equal(got, []string{"m-1002", "m-1004", "m-1005"}) {
		t.Fatalf("queue holds %v after the discard", got)
	}
	h.mustShow("done: discarded 2 from orders.dlq")
	h.mustNotShow("* m-", "marked") // the marks went with the messages
	h.mustShow("m-1002")

	es, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Action != triage.ActionDiscard || es[0].Reason != "fixed upstream qxRJy" ||
		!slices.Equal(es[0].MessageIDs, []string{"m-1001", "m-1003"}) || es[0].Details["count"] != float64(2) ||
		!slices.Equal(es[1].MessageIDs, []string{"m-1001", "m-1003"}) || es[1].Actor != "ana@bastion" {
		t.Fatalf("journal entries %+v", es)
	}
}

func TestDiscardOnTheGroupsScreenTakesTheGroupAsShown(t *testing.T) {
	h, _ := liveHarness(t, 120, 40)
	h.openQueue("orders.dlq")
	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	h.press("discard")
	h.typeText("bad sku batch")
	h.press("open")
	d := h.m.c.dialog.(*discardConfirm)
	if !slices.Equal(d.tg.ids, []string{"m-1001", "m-1002", "m-1003"}) || d.tg.what != "group rejected/INVALID_SKU" {
		t.Fatalf("group target %+v", d.tg)
	}
	// a message of the same group arrives after the read: it is not taken
	h.reader.mu.Lock()
	h.reader.messages["orders.dlq"] = append(h.reader.messages["orders.dlq"],
		rejected("m-1099", "order.placed", "INVALID_SKU", 1, time.Minute, `"sku":"late"`))
	h.reader.mu.Unlock()
	h.press("confirm")
	if got := h.reader.ids("orders.dlq"); !slices.Equal(got, []string{"m-1004", "m-1005", "m-1099"}) {
		t.Fatalf("queue holds %v after the discard", got)
	}
}

func TestDiscardCancelledChangesNothing(t *testing.T) {
	h, j := liveHarness(t, 120, 40)
	openInvalidSKU(h)
	h.press("discard")
	h.typeText("x")
	h.press("open")
	h.press("cancel")
	h.mustShow("discard cancelled: nothing changed")
	if got := h.reader.ids("orders.dlq"); len(got) != 5 {
		t.Fatalf("queue holds %v", got)
	}
	if es, _ := j.Entries(); len(es) != 0 {
		t.Fatalf("journal has %d entries", len(es))
	}
}

func TestActionsOnASnapshotSayTheyNeedALiveBroker(t *testing.T) {
	h := newHarness(t, Options{Journal: openJournal(t)}, 120, 40)
	openInvalidSKU(h)
	for _, action := range []string{"discard", "replay"} {
		h.press(action)
		if h.m.c.dialog != nil || h.m.c.focus != screenMessages {
			t.Fatalf("%s opened %T on a snapshot", action, h.m.c.dialog)
		}
		h.mustShow(action + " needs a live broker: this is a snapshot, read-only")
	}
}

func TestActionsInReadOnlyModeSaySo(t *testing.T) {
	h := newHarness(t, Options{Journal: openJournal(t), ActionsOff: "read-only mode is on"}, 120, 40)
	openInvalidSKU(h)
	h.press("discard")
	if h.m.c.dialog != nil {
		t.Fatalf("discard opened %T in read-only mode", h.m.c.dialog)
	}
	h.mustShow("discard is off: read-only mode is on")
}

func TestStaleDiscardAndJournalRepliesAreDropped(t *testing.T) {
	h, _ := liveHarness(t, 120, 40)
	openInvalidSKU(h)
	h.send(discardedMsg{id: 999, queue: "orders.dlq", res: triage.DiscardResult{Discarded: []string{"m-1001"}}})
	h.mustNotShow("discarded")
	h.send(journalMsg{id: 999, entries: []journal.Entry{{Seq: 7, Action: "stale"}}})
	h.send(replayProgressMsg{id: 999, p: replay.Progress{Phase: replay.PhaseRunning}})
	h.send(replayDoneMsg{id: 999})
	if h.m.c.focus != screenMessages || h.m.replay.Started() {
		t.Fatal("a stale reply changed the screen")
	}
}

// startedReplay walks to the dry run of the INVALID_SKU group and starts it
// without running the replay's command: the test plays the engine's part.
func startedReplay(t *testing.T) *harness {
	h, _ := liveHarness(t, 80, 24)
	h.m.replay.fixedID = "rp-20261130T100000-0a1b2c3d"
	h.openQueue("orders.dlq")
	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	h.press("replay")
	if h.m.c.focus != screenReplay {
		t.Fatalf("screen %d after replay", h.m.c.focus)
	}
	h.press("open")
	if _, ok := h.m.c.dialog.(*startConfirm); !ok {
		t.Fatalf("enter did not ask first: dialog %T", h.m.c.dialog)
	}
	h.m.Update(keyPress("y")) // the run command is left unrun
	if h.m.replay.run == nil || !h.m.replay.Running() {
		t.Fatal("no replay in flight after the confirmation")
	}
	return h
}

func TestReplayAbortAsksFirst(t *testing.T) {
	h := startedReplay(t)
	h.m.Update(replayProgressMsg{id: h.m.replay.run.id, p: replay.Progress{Phase: replay.PhaseCanary, Total: 3, Remaining: 3}})
	h.m.Update(keyPress("a"))
	if _, ok := h.m.c.dialog.(*abortConfirm); !ok {
		t.Fatalf("abort did not ask: dialog %T", h.m.c.dialog)
	}
	h.mustShow("Abort the replay?", "stays in orders.dlq")
	h.m.Update(keyPress("n"))
	if len(h.m.replay.run.ctl) != 0 {
		t.Fatal("a declined abort reached the replay")
	}
	h.m.Update(keyPress("esc")) // esc asks too
	if _, ok := h.m.c.dialog.(*abortConfirm); !ok {
		t.Fatalf("esc did not ask: dialog %T", h.m.c.dialog)
	}
	h.m.Update(keyPress("y"))
	if c := <-h.m.replay.run.ctl; c != replay.Abort {
		t.Fatalf("sent %v, want abort", c)
	}
}

func TestQuitDuringAReplayAsksThenAbortsAndQuitsWhenItEnds(t *testing.T) {
	h := startedReplay(t)
	h.press("journal") // another screen: quit still asks
	h.m.Update(keyPress("q"))
	d, ok := h.m.c.dialog.(*abortConfirm)
	if !ok || !d.quit {
		t.Fatalf("quit during a replay did not ask: dialog %T", h.m.c.dialog)
	}
	h.mustShow("A replay is running: quitting aborts it.")
	h.m.Update(keyPress("y"))
	if c := <-h.m.replay.run.ctl; c != replay.Abort {
		t.Fatalf("sent %v, want abort", c)
	}
	_, cmd := h.m.Update(replayDoneMsg{id: h.m.replay.run.id, res: replay.Result{Aborted: true, Untouched: 3}})
	if cmd == nil {
		t.Fatal("no quit after the aborted replay ended")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("the replay ended but dlqt did not quit")
	}
}

func TestReplayKeysSendCommands(t *testing.T) {
	h := startedReplay(t)
	h.m.Update(replayProgressMsg{id: h.m.replay.run.id, p: replay.Progress{Phase: replay.PhaseAwaitingRamp}})
	h.mustShow("WAITING FOR YOUR DECISION", "+ ramps up")
	h.m.Update(keyPress("+"))
	h.m.Update(keyPress("p"))
	h.m.Update(replayProgressMsg{id: h.m.replay.run.id, p: replay.Progress{Phase: replay.PhasePaused}})
	h.mustShow("PAUSED")
	h.m.Update(keyPress("p"))
	var got []replay.Command
	for len(h.m.replay.run.ctl) > 0 {
		got = append(got, <-h.m.replay.run.ctl)
	}
	want := []replay.Command{replay.RampUp, replay.Pause, replay.Resume}
	if !slices.Equal(got, want) {
		t.Fatalf("commands %v, want %v", got, want)
	}
}

func TestReplayGaugeShowsTheProgressThenTheOutcome(t *testing.T) {
	h := startedReplay(t)
	id := h.m.replay.run.id
	h.m.Update(replayProgressMsg{id: id, p: gaugeProgress()})
	h.mustShow("RUNNING", "target 40 msg/s", "achieved 38 msg/s", "120 of 300 published", "▁", "█",
		"returned 1", "failed again 0", "remaining    180", "14 ready in orders.work", "eta          5s")
	h.m.Update(replayDoneMsg{id: id, res: replay.Result{ID: "rp-x", Resolved: 297, Returned: 1, Untouched: 2}})
	h.mustShow("FINISHED", "resolved     297", "returned     1", "untouched    2", "Duplicates are possible")
	if h.m.replay.run != nil {
		t.Fatal("the run outlived its end")
	}
	h.m.Update(replayProgressMsg{id: id, p: replay.Progress{Phase: replay.PhaseCanary}})
	h.mustShow("FINISHED") // a late report is dropped
}

func TestReplayStoppedSaysWhy(t *testing.T) {
	h := startedReplay(t)
	id := h.m.replay.run.id
	p := gaugeProgress()
	p.Phase, p.StoppedBecause = replay.PhaseStopped, "m-1001 failed again into orders.dlq during the canary"
	h.m.Update(replayProgressMsg{id: id, p: p})
	h.mustShow("STOPPED: m-1001 failed again into orders.dlq")
	h.m.Update(replayDoneMsg{id: id, res: replay.Result{FailedAgain: 1, Untouched: 2, StoppedBecause: p.StoppedBecause}})
	h.mustShow("STOPPED: m-1001 failed again", "failed again 1", "untouched    2")
}

func TestReplayDryRunEditsAreCheckedAgainstTheAllowlist(t *testing.T) {
	h, _ := liveHarness(t, 120, 40)
	h.m.c.opts.Actions.Allow = []string{"orders:order.*"}
	h.openQueue("orders.dlq")
	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	h.press("replay") // the whole group
	h.mustShow("orders:order.placed", "original route (allowed)", "3 messages", "canary", "5 at 1.0 msg/s")

	h.send(keyPress("e"))
	if _, ok := h.m.c.dialog.(*editPrompt); !ok {
		t.Fatalf("e did not open the destination prompt: %T", h.m.c.dialog)
	}
	h.typeText("orders:order.retry")
	h.press("open")
	h.mustShow("orders:order.retry", "allowed by replay.allow")

	h.send(keyPress("e")) // the prompt starts with the current value
	h.answerPlanPrompt(":elsewhere")
	h.mustShow("NOT allowed", "problem:")
	h.press("open") // enter refuses a plan with problems
	if h.m.c.dialog != nil {
		t.Fatalf("a disallowed plan asked to start: %T", h.m.c.dialog)
	}
	h.mustShow("may not run")

	h.send(keyPress("c"))
	h.answerPlanPrompt("zero")
	h.mustShow("refused: canary size")
	h.answerPlanPrompt("2")
	h.send(keyPress("o"))
	h.answerPlanPrompt("3")
	h.mustShow("2 at 1.0 msg/s, then observe 3s")
	if o := h.m.replay.Plan().Options; o.Canary != 2 || o.Observe != 3*time.Second {
		t.Fatalf("plan options %+v", o)
	}
}

func TestReplayRunsThroughTheEngineWithTheSelectedIDs(t *testing.T) {
	h, _ := liveHarness(t, 120, 40)
	var ran replay.Plan
	h.m.c.eng.runReplay = func(_ context.Context, plan replay.Plan, _ replay.Port, _ triage.Recorder, _ <-chan replay.Command, progress func(replay.Progress)) (replay.Result, error) {
		ran = plan
		progress(replay.Progress{Phase: replay.PhaseCanary, Total: 2, Remaining: 2})
		return replay.Result{ID: plan.ID, Resolved: 2}, nil
	}
	closed := false
	h.m.c.opts.Actions.OpenReplay = func(context.Context, string, string, bool, int) (replay.Port, error) {
		return closingPort{closed: &closed}, nil
	}
	openInvalidSKU(h)
	h.press("mark")
	h.press("mark")
	h.press("replay")
	h.press("open")
	h.press("confirm")
	if !slices.Equal(ran.IDs(), []string{"m-1001", "m-1002"}) {
		t.Fatalf("replayed %v, want the two marked", ran.IDs())
	}
	if !closed {
		t.Fatal("the replay's port was not closed")
	}
	h.mustShow("FINISHED", "resolved     2")
	h.press("back") // back to the messages, read again
	if h.m.c.focus != screenMessages {
		t.Fatalf("screen %d after the replay", h.m.c.focus)
	}
}

// answerPlanPrompt replaces the text of the open plan prompt with v and
// presses enter; there must be one.
func (h *harness) answerPlanPrompt(v string) {
	h.t.Helper()
	d, ok := h.m.c.dialog.(*editPrompt)
	if !ok {
		h.t.Fatalf("no plan prompt open: dialog %T", h.m.c.dialog)
	}
	d.input.SetValue(v)
	h.press("open")
}

// closingPort is a ReplayPort whose only job is to say it was closed; the
// fake engine never calls the rest.
type closingPort struct {
	replay.Port
	closed *bool
}

func (p closingPort) Close() error { *p.closed = true; return nil }

func gaugeProgress() replay.Progress {
	hist := make([]float64, 60)
	for i := range hist {
		hist[i] = float64(i % 9 * 5)
	}
	return replay.Progress{
		ReplayID: "rp-20261130T100000-0a1b2c3d", Phase: replay.PhaseRunning, TargetRate: 40, AchievedRate: 38.4,
		Total: 300, Published: 120, Confirmed: 118, Returned: 1, FailedAgain: 0, Remaining: 180, InFlight: 1,
		DestinationDepth: 14, ETA: 4700 * time.Millisecond, History: hist, Elapsed: 21 * time.Second,
	}
}

func TestJournalScreenListsNewestFirstAndVerifies(t *testing.T) {
	h, j := liveHarness(t, 120, 40)
	for _, r := range []string{"first", "second"} {
		if _, err := j.Append(journal.Entry{Actor: "ana", Action: "tag", Vhost: "shop", Queue: "orders.dlq", MessageIDs: []string{"m-1"}, Reason: r}); err != nil {
			t.Fatal(err)
		}
	}
	h.press("journal")
	if h.m.c.focus != screenJournal {
		t.Fatalf("screen %d", h.m.c.focus)
	}
	h.mustShow("2 entries", "chain verified")
	s := h.screen()
	if strings.Index(s, "second") > strings.Index(s, "first") {
		t.Fatalf("not newest first:\n%s", s)
	}
	h.press("open")
	h.mustShow("entry 2", "second", "m-1", "prev hash", "hash")
	h.press("back")
	h.press("back")
	if h.m.c.focus != screenQueues {
		t.Fatalf("screen %d after leaving the journal", h.m.c.focus)
	}
}

func TestInterruptedReplayBannerAndResume(t *testing.T) {
	r := scenario()
	j := openJournal(t)
	rec := journal.NewRecorder(j, "ana", "bastion")
	in, err := triage.Inspect(context.Background(), r, "orders.dlq", triage.BrowseOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := replay.NewPlan(in, triage.Selection{IDs: []string{"m-1001", "m-1002"}}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []triage.Record{
		{Action: triage.ActionReplayPlan, Vhost: "shop", Queue: "orders.dlq", Details: map[string]any{"replay_id": plan.ID, "plan": plan}},
		{Action: triage.ActionReplayStart, Vhost: "shop", Queue: "orders.dlq", Details: map[string]any{"replay_id": plan.ID}},
	} {
		if err := rec.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, Options{Reader: r, Journal: j, Actions: &Actions{Sweeper: r}}, 120, 40)
	flat := strings.Join(strings.Fields(h.screen()), " ")
	for _, want := range []string{"INTERRUPTED REPLAY " + plan.ID, "U resumes it here", "dlqt replay --resume " + plan.ID} {
		if !strings.Contains(flat, want) {
			t.Fatalf("banner lacks %q:\n%s", want, h.screen())
		}
	}
	h.send(keyPress("U"))
	if h.m.c.focus != screenReplay || h.m.replay.Plan().Prior == nil {
		t.Fatalf("U did not open the resume plan: screen %d", h.m.c.focus)
	}
	h.mustShow("Resume interrupted replay", "2 messages")
}

// TestReplayOfAGroupRecordsTheGroupInThePlan: the plan journalled for a
// replay of a group names the group (it said "group": null), and still
// takes the ids shown.
func TestReplayOfAGroupRecordsTheGroupInThePlan(t *testing.T) {
	h, _ := liveHarness(t, 120, 40)
	var ran replay.Plan
	h.m.c.eng.runReplay = func(_ context.Context, plan replay.Plan, _ replay.Port, _ triage.Recorder, _ <-chan replay.Command, progress func(replay.Progress)) (replay.Result, error) {
		ran = plan
		return replay.Result{ID: plan.ID}, nil
	}
	closed := false
	h.m.c.opts.Actions.OpenReplay = func(context.Context, string, string, bool, int) (replay.Port, error) {
		return closingPort{closed: &closed}, nil
	}
	h.openQueue("orders.dlq")
	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	h.press("replay")
	h.press("open")
	h.press("confirm")
	want := triage.GroupKey{Reason: triage.ReasonRejected, Code: "INVALID_SKU"}
	if g := ran.Selection.Group; g == nil || *g != want {
		t.Fatalf("the plan's group is %v, want %v", g, want)
	}
	if !slices.Equal(ran.IDs(), []string{"m-1001", "m-1002", "m-1003"}) {
		t.Fatalf("replayed %v, want the group's three", ran.IDs())
	}
}
