package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/views"
)

// Update tests for what a first-time responder was misled by during a
// staged incident: each drives the root model as the program would.

// TestReplayReportBeforeTheHoldIsNotFinished: the run's first report comes
// before the selected messages are held, with nothing queued, so it reads
// "done"; only the run's result may say FINISHED.
func TestReplayReportBeforeTheHoldIsNotFinished(t *testing.T) {
	h := startedReplay(t)
	id := h.m.replay.run.id
	h.m.Update(replayProgressMsg{id: id, p: replay.Progress{Phase: replay.PhaseDone, Total: 3, DestinationDepth: -1}})
	h.mustNotShow("FINISHED")
	h.mustShow("HOLDING", "0 of 3 published")
	h.m.Update(replayProgressMsg{id: id, p: replay.Progress{Phase: replay.PhaseDone, Total: 3, Published: 3, DestinationDepth: -1}})
	h.mustNotShow("FINISHED")
	h.mustShow("FINISHING")
	h.m.Update(replayDoneMsg{id: id, res: replay.Result{Resolved: 3}})
	h.mustShow("FINISHED")
}

// TestEscClosesTheHelpAndNothingElse: esc under the full help closes it
// and stays on the screen.
func TestEscClosesTheHelpAndNothingElse(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue("orders.dlq")
	h.press("help")
	h.mustShow("? = unknown")
	h.press("back")
	if h.m.help.ShowAll {
		t.Fatal("esc left the help open")
	}
	if h.m.c.focus != screenGroups {
		t.Fatalf("esc under the help left the groups: screen %d", h.m.c.focus)
	}
	h.press("back")
	if h.m.c.focus != screenQueues {
		t.Fatalf("esc without help did not go back: screen %d", h.m.c.focus)
	}
}

// TestFullHelpListsEachKeyOnce: the groups' full help is composed of
// overlapping groups; refresh shows once.
func TestFullHelpListsEachKeyOnce(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	for _, open := range []func(*harness){func(*harness) {}, func(h *harness) { h.openQueue("orders.dlq") }, openInvalidSKU} {
		h := newHarness(t, Options{}, 120, 40)
		open(h)
		h.press("help")
		if n := strings.Count(h.screen(), "refresh"); n != 1 {
			t.Fatalf("the help lists 'r refresh' %d times:\n%s", n, h.screen())
		}
	}
}

// longIDs is the scenario with ids of one kind that differ only at the end.
func longIDs() *fakeReader {
	r := scenario()
	var ms []triage.Message
	for i, tail := range []string{"0041", "0042", "0043"} {
		id := "msg_shipment.track.updated.eu-west-1-" + tail
		ms = append(ms, rejected(id, "shipment.track.updated", "LATE", 1, time.Duration(i+1)*time.Minute, `"n":1`))
	}
	r.messages["orders.dlq"] = ms
	return r
}

// TestLongIDsKeepTheirDistinguishingTail: ids are cut in the middle, so
// marked messages can be told apart, and the dialogs name them.
func TestLongIDsKeepTheirDistinguishingTail(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	r := longIDs()
	j := openJournal(t)
	h := newHarness(t, Options{Reader: r, Journal: j, Actions: &Actions{Sweeper: r}}, 80, 24)
	h.openQueue("orders.dlq")
	h.press("open")
	h.mustShow("eu-west-1-0041", "eu-west-1-0042", "eu-west-1-0043", "msg_shipment.tr", "…") // the middle gives way
	h.press("mark")
	h.press("mark")
	h.press("discard")
	h.mustShow("ids: msg_shipm", "-0041, msg_shipm", "-0042 (2)")
	h.typeText("late")
	h.press("open")
	h.mustShow("(2 marked messages)", "ids       msg_shipmen", "-0041, msg_shipmen", "-0042 (2)")
}

// TestAHalfTypedWordIsNeverTheLastGoodFilter: appending " reason=bogus"
// passes through " reason" (text~reason), which parses; the bad line falls
// back to its whole words, not to that prefix.
func TestAHalfTypedWordIsNeverTheLastGoodFilter(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue("orders.dlq")
	h.press("filter")
	h.typeText("reason=rejected reason=bogus")
	h.mustShow("bad filter, the last good one stays")
	if f := h.m.groups.Filter().String(); f != "reason=rejected" {
		t.Fatalf("filter in force %q, want reason=rejected", f)
	}
	h.mustShow("4 of 5 messages, 2 groups")
}

// TestTheHeaderCountsWhatTheFilterShows: with words or fields, the header
// says how much of the read is shown, 0 when nothing matches.
func TestTheHeaderCountsWhatTheFilterShows(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue("orders.dlq")
	h.mustShow("all 5 messages, 3 groups")
	h.press("filter")
	h.typeText("nothing-matches-this")
	h.press("open")
	h.mustShow("— 0 of 5 messages, 0 groups")
	h.press("back") // clears the filter
	h.press("filter")
	h.typeText("event_type~nosuchevent")
	h.mustShow("0 of 5 messages, 0 groups")
}

// TestDoctorFoldsAdvisoriesAndShowsFixCommandsWhole: errors first, the
// advisories in one row until opened, a fix's command on a line of its
// own, never wrapped. (Errors sort first as warnings do: the scenario
// has a warning.)
func TestDoctorFoldsAdvisoriesAndShowsFixCommandsWhole(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 140, 40)
	h.press("doctor")
	h.mustShow("4 advisories,", "enter to show")
	h.mustNotShow("dlx-by-argument")
	s := h.screen()
	if strings.Index(s, "WARNING ") > strings.Index(s, "ADVISORY 4 advisories,") {
		t.Fatalf("the error is not first:\n%s", s)
	}
	h.press("bottom")
	h.press("open")
	h.mustShow("dlx-by-argument")
	h.press("bottom")
	h.press("open")
	var cmd string
	for _, l := range strings.Split(h.screen(), "\n") {
		if strings.Contains(l, "$ rabbitmqctl set_policy") {
			cmd = l
		}
	}
	if !strings.Contains(cmd, "--apply-to queues") || !strings.Contains(cmd, `{"dead-letter-exchange":`) {
		t.Fatalf("the fix command is not whole on one line (%q):\n%s", cmd, h.screen())
	}
}

// TestAt60ColumnsNamesKeepTheirWidthAndQuitShows: the sources, consumers
// and oldest columns give way before queue names are cut, in/s and trend
// stay (they say a queue is still filling), and the help line keeps quit.
func TestAt60ColumnsNamesKeepTheirWidthAndQuitShows(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 60, 24)
	h.mustShow("payments.parking ", "audit.failed", "q/ctrl+c quit", "in/s", "trend")
	h.mustNotShow("sources", "cons")
	h.openQueue("orders.dlq")
	h.mustShow("q/ctrl+c quit")
	h.press("open")
	h.mustShow("q/ctrl+c quit")
}

// TestTheDoctorScreenKeepsTheBrowseOffItsStatusLine: the status line says
// what the screen shows; the doctor does not show the read's messages.
func TestTheDoctorScreenKeepsTheBrowseOffItsStatusLine(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue("orders.dlq")
	h.mustShow("│ all 5 messages │")
	h.press("doctor")
	h.mustNotShow("all 5 messages")
}

// TestARevealedPayloadSaysRevealed: the payload's heading no longer says
// its values are redacted once they show.
func TestARevealedPayloadSaysRevealed(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	j := openJournal(t)
	h := newHarness(t, Options{Journal: j}, 120, 40)
	openM1001(h)
	h.mustShow("values redacted")
	h.press("reveal")
	h.send(keyPress("y"))
	h.mustShow("hunter2", "redacted values revealed")
	h.mustNotShow("values redacted)")
}

// TestAGroupDiscardIsJournalledWithItsGroupAndFilter: as the CLI records a
// --group, not only "3 message id(s)".
func TestAGroupDiscardIsJournalledWithItsGroupAndFilter(t *testing.T) {
	h, j := liveHarness(t, 120, 40)
	h.openQueue("orders.dlq")
	h.press("filter")
	h.typeText("event_type~order")
	h.press("open")
	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	h.press("discard")
	h.typeText("bad sku batch")
	h.press("open")
	h.press("confirm")
	es, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, e := range es {
		if e.Action != triage.ActionDiscard || e.Details["step"] != "decision" {
			continue
		}
		found = true
		sel, _ := e.Details["selection"].(string)
		where, _ := e.Details["where"].([]any)
		if e.Details["group"] != "rejected/INVALID_SKU" || len(where) != 1 || where[0] != "event_type~order" ||
			!strings.Contains(sel, "group rejected/INVALID_SKU where event_type~order") {
			t.Fatalf("decision details %v", e.Details)
		}
	}
	if !found {
		t.Fatal("no discard decision journalled")
	}
}

// TestResumeWithNothingLeftToPublish: a replay killed after its last
// confirm has acks left to do, not "0 of 5 not done", and no canary.
func TestResumeWithNothingLeftToPublish(t *testing.T) {
	st := replay.State{ID: "rp-1", Queue: "orders.dlq", Plan: replay.Plan{ID: "rp-1", Queue: "orders.dlq",
		Items: replay.ItemsOf(replay.Item{ID: "a"}, replay.Item{ID: "b"})}, Outcomes: map[string]replay.Outcome{"a": replay.OutcomeConfirmed, "b": replay.OutcomeConfirmed}}
	if got := leftToDo(st); got != "2 confirmed to ack" {
		t.Fatalf("banner says %q", got)
	}
	st.Outcomes = map[string]replay.Outcome{"a": replay.OutcomeResolved}
	if got := leftToDo(st); got != "1 of 2 left to publish" {
		t.Fatalf("banner says %q", got)
	}

	h, _ := liveHarness(t, 120, 40)
	plan := st.Plan
	plan.Prior = &replay.Prior{Confirmed: []string{"a", "b"}}
	h.m.replay.SetPlan(plan, "interrupted replay rp-1", true)
	h.m.c.focus = screenReplay
	h.mustShow("nothing is left to publish", "enter finish")
	h.mustNotShow("canary", "then observe")
}

// TestHealthStaysRaisedUntilTheQueueIsDealtWith: a burst of 37 dead
// letters raises the state; when the inflow has decayed the state holds,
// the detail says when the last one came, the growth and the oldest age by
// the messages' death times once read; back to the old depth, it falls.
func TestHealthStaysRaisedUntilTheQueueIsDealtWith(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	// ages far below the thresholds: only the burst raises the state
	h := newHarness(t, Options{Health: views.HealthThresholds{AgeWarn: 100 * time.Hour, AgeCrit: 200 * time.Hour}}, 140, 40)
	h.openQueue("orders.dlq") // the browse: death times of the 5 messages
	h.press("back")
	fillOrders(h, 5, 42)                              // a burst of 37 in 5 s: 7.4 msg/s
	h.mustShow("WARN  orders.dlq")                    // 42 is under depth_warn; the rate raised it
	fillOrdersFrom(h, 10*time.Second, 42, 42, 42, 42) // flat
	fillOrdersFrom(h, 40*time.Second, 42, 42)         // the 30 s window has no growth left
	if in := h.m.queues.health.queues["orders.dlq"].ingress; in != 0 {
		t.Fatalf("ingress %v after the burst, want 0", in)
	}
	h.mustShow("WARN  orders.dlq", "last dead letter 40s ago", "+37 in the last 45s", "oldest 2h (death time)",
		"WARN held until the depth is back to 5")
	fillOrdersFrom(h, 50*time.Second, 5)
	h.mustShow("ok    orders.dlq")
}

// TestActionsRefreshWhatTheyChangedAndStaleNumbersSayTheirAge: a discard
// reads the queue list and the group again; while the broker's depth
// trails the discard, the queues screen shows the exact count of the newer
// read with its age. After a replay, the groups read before it say so.
func TestActionsRefreshWhatTheyChangedAndStaleNumbersSayTheirAge(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h, _ := liveHarness(t, 120, 40)
	h.openQueue("orders.dlq")
	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	h.press("discard")
	h.typeText("bad sku batch")
	h.press("open")
	h.m.c.Now = func() time.Time { return fixedNow.Add(3 * time.Second) }
	h.press("confirm")
	// the fake broker's depth, like the management API's just after an
	// action, still says 5; the browse read to the end found 2
	h.mustShow("all 2 messages")
	h.press("back")
	h.mustShow("2 · 0s ago") // the browse after the discard, newer than the list's 5
	h.m.c.Now = func() time.Time { return fixedNow.Add(20 * time.Second) }
	h.send(pollMsg{})
	h.mustShow(" 5 ") // past the stats lag the list's number stands alone again

	r := startedReplay(t)
	r.m.c.Now = func() time.Time { return fixedNow.Add(8 * time.Second) }
	r.m.Update(replayDoneMsg{id: r.m.replay.run.id, res: replay.Result{Resolved: 3}})
	if v := r.m.groups.View(); !strings.Contains(v, "read 8s ago, before") {
		t.Fatalf("the groups read before the replay do not say so:\n%s", v)
	}
}

// TestARefreshLeavesASideScreenOpen: the re-read a discard starts lands
// after the user opened the journal: the journal stays on screen (it
// used to fall back to the groups, eating the key that opened it).
func TestARefreshLeavesASideScreenOpen(t *testing.T) {
	h, _ := liveHarness(t, 120, 40)
	h.openQueue("orders.dlq")
	h.press("journal")
	if h.m.c.focus != screenJournal {
		t.Fatalf("the journal did not open: focus %v", h.m.c.focus)
	}
	h.m.flow.reselect()
	if h.m.c.focus != screenJournal {
		t.Errorf("a refresh moved the focus from the journal to %v", h.m.c.focus)
	}
}
