package ui

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/views"
)

func TestQueueListShowsParkingQueuesSanitised(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)
	h.mustShow("orders.dlq", "payments.parking", "audit.failed", "orders.work", `evil\x1b]0;pwned\x07.dlq`, "3h12m")
	if strings.Contains(h.m.Screen(), "\x1b]0;") || strings.Contains(h.m.Screen(), "\a") {
		t.Fatal("a queue name's escape sequence reached the screen")
	}
}

func TestEnterWalksTheFourScreensAndEscWalksBack(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue("orders.dlq")
	if h.m.c.focus != screenGroups {
		t.Fatalf("screen %d after open, want groups", h.m.c.focus)
	}
	h.mustShow("all 5 messages", "INVALID_SKU", "PAYMENT_TIMEOUT", "published")

	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	h.press("open")
	if h.m.c.focus != screenMessages {
		t.Fatalf("screen %d, want messages", h.m.c.focus)
	}
	h.mustShow("m-1001", "m-1002", "m-1003")
	h.mustNotShow("m-1004")

	h.m.messages.SelectID("m-1001")
	h.press("open")
	if h.m.c.focus != screenMessage {
		t.Fatalf("screen %d, want message", h.m.c.focus)
	}
	h.mustShow("identity", "failure", "attempt timeline", "payload", "values redacted")
	// the secret and the escape sequence from the payload never reach the screen
	h.mustNotShow("hunter2")
	if strings.Contains(h.m.Screen(), "\x1b[31m") {
		t.Fatal("a payload escape sequence reached the screen")
	}

	for _, want := range []screenID{screenMessages, screenGroups, screenQueues} {
		h.press("back")
		if h.m.c.focus != want {
			t.Fatalf("esc led to screen %d, want %d", h.m.c.focus, want)
		}
	}
}

func TestMessageScreenShowsHeadersRedactedWithoutRawXDeath(t *testing.T) {
	h := newHarness(t, Options{}, 120, 60)
	h.openQueue("orders.dlq")
	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	h.press("open")
	h.m.messages.SelectID("m-1001")
	h.press("open")
	h.press("bottom")
	h.mustShow("x-first-death-queue", "x-api-token")
	h.mustNotShow("tok_live_abcdefghijklmnop", "x-death:")
}

func TestFilterTypingNeverTriggersActions(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)
	h.press("filter")
	// q quits, r refreshes, t tags, j moves: typed into a filter they are text
	h.typeText("qrtj")
	if h.quit {
		t.Fatal("typing q in the filter quit the program")
	}
	if got := h.m.queues.Table().FilterValue(); got != "qrtj" {
		t.Fatalf("filter = %q, want qrtj", got)
	}
	h.press("back") // esc clears the focused filter
	if h.m.queues.Table().Filtering() || h.m.queues.Table().FilterValue() != "" {
		t.Fatal("esc did not clear the filter")
	}

	h.press("filter")
	h.typeText("PAYM")
	h.press("open") // enter keeps the filter and gives the keys back
	if n := h.m.queues.Table().Len(); n != 1 {
		t.Fatalf("filter PAYM (any case) kept %d queues, want 1", n)
	}
	h.press("open")
	if h.m.c.focus != screenGroups || h.m.groups.Queue() != "payments.parking" {
		t.Fatalf("opened %q on screen %d", h.m.groups.Queue(), h.m.c.focus)
	}
}

func TestCtrlCQuitsEvenWhileTyping(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.press("filter")
	h.send(keyPress("ctrl+c"))
	if !h.quit {
		t.Fatal("ctrl+c did not quit while the filter was focused")
	}
}

func TestStartQueueOpensItsGroupsAndEscListsQueues(t *testing.T) {
	h := newHarness(t, Options{StartQueue: "orders.dlq"}, 80, 24)
	if h.m.c.focus != screenGroups || h.m.groups.Inspection() == nil {
		t.Fatalf("screen %d, inspection %v", h.m.c.focus, h.m.groups.Inspection() != nil)
	}
	h.press("back")
	if h.m.c.focus != screenQueues {
		t.Fatalf("esc led to screen %d, want queues", h.m.c.focus)
	}
	if q, _ := h.m.queues.Selected(); q.Name != "orders.dlq" {
		t.Fatalf("selected %q, want the queue we came from", q.Name)
	}
}

func TestStaleRepliesAreDropped(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)

	// open orders.dlq, and walk away before its browse answers
	h.m.queues.SelectName("orders.dlq")
	_, staleBrowse := h.m.Update(keyPress("enter"))
	h.press("back")
	if h.m.flow.browse != nil {
		t.Fatal("leaving the screen kept the browse")
	}
	h.openQueue(hostileQueue)
	want := h.m.groups.Inspection()

	// now the first browse answers, progress and all: it must change nothing
	h.run(staleBrowse)
	if h.m.groups.Queue() != hostileQueue || h.m.groups.Inspection() != want {
		t.Fatalf("a stale reply replaced the screen with %q", h.m.groups.Queue())
	}
	h.mustShow(`evil\x1b]0;pwned\x07.dlq`)
	h.mustNotShow("INVALID_SKU")

	// tags read for the queue we left are dropped
	h.send(tagsMsg{id: h.m.flow.tagsReq, queue: "orders.dlq", tags: map[string][]string{"x-1": {"wrong-queue"}}})
	h.press("open")
	h.mustNotShow("wrong-queue")
	h.press("back")

	// a stale queue list is dropped too
	h.press("refresh")
	h.send(parkingMsg{id: h.m.queues.listReq - 1})
	if h.m.queues.Table().Total() == 0 {
		t.Fatal("a stale queue list emptied the screen")
	}
}

func TestDeliveryCostAsksThenAcceptReBrowses(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.openQueue("payments.parking")
	if _, ok := h.m.c.dialog.(*costDialog); !ok {
		t.Fatalf("no delivery-cost dialog, dialog = %T", h.m.c.dialog)
	}
	h.mustShow("payments.parking", "delivery limit  5", "depth           2 messages", "dead-lettered")
	h.press("confirm")
	calls := h.reader.calls()
	if len(calls) != 2 || calls[0].AcceptDeliveryCost || !calls[1].AcceptDeliveryCost {
		t.Fatalf("browses %+v, want a refused one then an accepted one", calls)
	}
	if h.m.c.dialog != nil || h.m.groups.Inspection() == nil {
		t.Fatal("accepting did not browse the queue")
	}
	h.press("open")
	h.mustShow("deliv", "3/5")
}

func TestDeliveryCostAnyOtherKeyGoesBack(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.openQueue("payments.parking")
	h.typeText("x")
	if h.m.c.dialog != nil || h.m.c.focus != screenQueues {
		t.Fatalf("dialog %T, screen %d: want back on the queue list", h.m.c.dialog, h.m.c.focus)
	}
	if n := len(h.reader.calls()); n != 1 {
		t.Fatalf("%d browses, want only the refused one", n)
	}
}

func TestBrowseProgressReachesTheScreenThenTheBound(t *testing.T) {
	h := newHarness(t, Options{BrowseLimit: 3}, 120, 40)
	h.reader.pause = make(chan struct{})
	next := openPausedBrowse(h, "orders.dlq")
	if next == nil {
		t.Fatal("no progress came from the browse")
	}
	next = progressUntil(t, h, next, "1 / 3 messages")
	h.mustShow("reading orders.dlq: 1 / 3 messages…", "reading orders.dlq…")
	close(h.reader.pause)
	h.run(next)
	h.mustShow("held 3 of 5 messages: --limit 3") // which bound, and why
	h.mustNotShow("reading")
}

func TestBrokerErrorsShowOnOneLine(t *testing.T) {
	r := scenario()
	r.failTopology = errors.New("dial tcp 127.0.0.1:15672: connection refused\nretry \x1b[2Jlater")
	h := newHarness(t, Options{Reader: r}, 80, 24)
	// an error that fits breaks between words: "refused\nretry" is one word
	h.mustShow("error: listing parking queues: dial tcp 127.0.0.1:15672: connection",
		`refused\nretry`, "could not read the parking queues", "r tries again")
	if strings.Contains(h.m.Screen(), "\x1b[2J") {
		t.Fatal("an escape in an error reached the screen")
	}
	if n := len(strings.Split(h.m.Screen(), "\n")); n != 24 {
		t.Fatalf("an error broke the layout: %d lines", n)
	}
}

func TestUnknownStartQueueSaysSo(t *testing.T) {
	h := newHarness(t, Options{StartQueue: "no.such.queue"}, 120, 40)
	h.mustShow(`error: reading no.such.queue: queue "no.such.queue": not found`)
	if h.m.groups.Loading() {
		t.Fatal("still loading after the error")
	}
}

func TestBinaryPayloadIsShownAsHex(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue("orders.dlq")
	h.m.groups.SelectGroup(triage.ReasonPublished, "")
	h.press("open")
	h.press("open")
	h.mustShow("message m-1005", "binary, shown as hex", "reason          published")
}

func TestRefreshKeepsTheOpenMessage(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue("orders.dlq")
	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	h.press("open")
	h.m.messages.SelectID("m-1002")
	h.press("open")
	h.press("refresh")
	if h.m.c.focus != screenMessage || h.m.message.Shown().ID != "m-1002" {
		t.Fatalf("after refresh: screen %d, message %q", h.m.c.focus, h.m.message.Shown().ID)
	}
	if n := len(h.reader.calls()); n != 2 {
		t.Fatalf("%d browses, want 2", n)
	}
}

func TestTagWritesTheJournalAndShows(t *testing.T) {
	j, err := journal.Open(filepath.Join(t.TempDir(), "journal.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	h := newHarness(t, Options{Journal: j, Host: "bastion"}, 120, 40)
	h.openQueue("orders.dlq")
	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	h.press("open")
	h.m.messages.SelectID("m-1002")
	h.press("tag")
	if _, ok := h.m.c.dialog.(*tagPrompt); !ok {
		t.Fatalf("no tag prompt, dialog = %T", h.m.c.dialog)
	}
	h.typeText("poison q") // q is text here, not quit
	h.press("open")
	if h.quit || h.m.c.dialog != nil {
		t.Fatalf("quit %v, dialog %T after saving the tag", h.quit, h.m.c.dialog)
	}
	h.mustShow("poison q", "done: tagged m-1002 in the journal; its tags: poison q")
	h.press("down") // the confirmation is said once
	h.mustNotShow("done: tagged")

	es, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 {
		t.Fatalf("%d journal entries, want 1", len(es))
	}
	e := es[0]
	if e.Action != triage.ActionTag || e.Reason != "poison q" || e.Actor != "ana@bastion" || e.Host != "bastion" ||
		e.Vhost != "shop" || e.Queue != "orders.dlq" || len(e.MessageIDs) != 1 || e.MessageIDs[0] != "m-1002" {
		t.Fatalf("journal entry %+v", e)
	}

	// reopening the queue reads the tags back from the journal
	h.press("back")
	h.press("back")
	h.openQueue("orders.dlq")
	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	h.press("open")
	h.mustShow("poison q")
}

func TestTagWithoutJournalSaysWhy(t *testing.T) {
	h := newHarness(t, Options{JournalErr: journal.ErrLocked}, 120, 40)
	h.openQueue("orders.dlq")
	h.press("open")
	h.press("tag")
	if h.m.c.dialog != nil {
		t.Fatal("a tag prompt opened with no journal")
	}
	h.mustShow("tagging is off", "in use by another dlqt")
}

func TestStatusLineShowsSourceVhostActorBoundAndNotice(t *testing.T) {
	h := newHarness(t, Options{Notice: "no broker answered — showing the bundled demo snapshot"}, 120, 40)
	h.openQueue("orders.dlq")
	h.mustShow("fake broker 127.0.0.1:5672", "vhost shop", "actor ana@bastion", "all 5 messages", "showing the bundled demo snapshot")
}

func TestEveryScreenFitsTheTerminal(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 16}} {
		h := newHarness(t, Options{}, size[0], size[1])
		check := func(where string) {
			lines := strings.Split(h.m.Screen(), "\n")
			if len(lines) != size[1] {
				t.Fatalf("%dx%d %s: %d lines", size[0], size[1], where, len(lines))
			}
			for i, l := range lines {
				if w := ansiWidth(l); w > size[0] {
					t.Fatalf("%dx%d %s: line %d is %d wide: %q", size[0], size[1], where, i, w, l)
				}
			}
		}
		check("queues")
		h.openQueue("orders.dlq")
		check("groups")
		h.press("open")
		check("messages")
		h.press("open")
		check("message")
		h.press("help")
		check("message with full help")
	}
}

// TestFullHelpExplainsThePlaceholders: "?", "-" and "—" appear in columns;
// the full help says which is which.
func TestFullHelpExplainsThePlaceholders(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.mustNotShow("? = unknown")
	h.press("help")
	h.mustShow("? = unknown", "- = none", "— = does not apply")
	h.press("filter") // typing: the help line is about the filter, no legend
	h.mustNotShow("? = unknown")
}

// TestShortHelpFitsAt80Columns: on every screen the one-line help ends with
// the quit key rather than an ellipsis at 80 columns.
func TestShortHelpFitsAt80Columns(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	for _, s := range goldenScreens {
		if s.name == "delivery-cost" || s.name == "queues-filter" || s.name == "groups-where" || strings.HasSuffix(s.name, "-confirm") {
			continue // a dialog or a focused filter replaces the help line
		}
		h := newHarness(t, Options{}, 80, 24)
		s.walk(h)
		if !strings.Contains(h.screen(), "q/ctrl+c quit\n") {
			t.Errorf("%s: the help line lost the quit key at 80 columns:\n%s", s.name, h.screen())
		}
	}
}

// TestLongErrorsWrapSoTheCauseShows: a broker error whose cause is at the
// end of a long URL wraps (at most three lines) instead of being cut at 80;
// longer still, its middle goes and its start and end stay.
func TestLongErrorsWrapSoTheCauseShows(t *testing.T) {
	r := scenario()
	r.failTopology = errors.New("management API GET /api/queues/shop?columns=name,type,messages,consumers,arguments,policy: bad answer: json: cannot unmarshal array")
	h := newHarness(t, Options{Reader: r}, 80, 24)
	// the break falls anywhere: read the screen without line ends and spaces
	flat := strings.NewReplacer("\n", "", " ", "").Replace(h.screen())
	if !strings.Contains(flat, "badanswer:json:cannotunmarshalarray") {
		t.Errorf("the cause of the error is not on screen:\n%s", h.screen())
	}
	if n := len(strings.Split(h.m.Screen(), "\n")); n != 24 {
		t.Fatalf("a long error broke the layout: %d lines", n)
	}
	r.failTopology = errors.New("GET " + strings.Repeat("/very/long/path", 40) + ": the cause at the end")
	h.press("refresh")
	flat = strings.NewReplacer("\n", "", " ", "").Replace(h.screen())
	if !strings.Contains(flat, "error:listingparkingqueues:GET/very") || !strings.Contains(flat, "…") ||
		!strings.Contains(flat, "thecauseattheend") {
		t.Errorf("a long error lost its start, its end or the mark of the cut:\n%s", h.screen())
	}
	if n := strings.Count(h.screen(), "/very/long/path"); n > 3*80/len("/very/long/path") {
		t.Errorf("the error took more than three lines: %d repeats shown", n)
	}
	if n := len(strings.Split(h.m.Screen(), "\n")); n != 24 {
		t.Fatalf("a long error broke the layout: %d lines", n)
	}
}

// TestAFailedReadSaysSoOnTheGroupsScreen: a browse that read nothing leaves
// a line saying what happened and how to retry, never a bare queue name;
// a failed refresh says the groups shown are the previous read's.
func TestAFailedReadSaysSoOnTheGroupsScreen(t *testing.T) {
	r := scenario()
	h := newHarness(t, Options{Reader: r}, 80, 24)
	r.failTopology = errors.New("connection refused")
	h.openQueue("orders.dlq")
	h.mustShow("could not read this queue (the error is below); r tries again", "connection refused")
	r.failTopology = nil
	h.press("refresh")
	h.mustShow("INVALID_SKU")
	h.mustNotShow("could not read")
	r.failTopology = errors.New("connection refused")
	h.press("refresh")
	h.mustShow("the last read failed (the error is below), showing the one before; r tries again", "INVALID_SKU")
}

// TestQuorumMessageSaysWhatTheReadCost: the delivery count is the one the
// broker reported before the read, and the screen says the read added one.
func TestQuorumMessageSaysWhatTheReadCost(t *testing.T) {
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue("payments.parking")
	h.press("confirm")
	h.press("open")
	h.press("open")
	h.mustShow("delivery count", "of limit 5 before this read (the read itself added 1)")
}

// TestLongNoticeWraps: why the demo opened instead of the broker is said in
// full at 80 columns.
func TestLongNoticeWraps(t *testing.T) {
	h := newHarness(t, Options{Notice: "DEMO data: no broker answered at amqp://guest:xxxxx@127.0.0.1:1/ (management API at http://127.0.0.1:1: connection refused)"}, 80, 24)
	flat := strings.NewReplacer("\n", "", " ", "").Replace(h.screen())
	if !strings.Contains(flat, "note:DEMOdata:nobrokeranswered") || !strings.Contains(flat, "connectionrefused)") {
		t.Errorf("the notice was cut:\n%s", h.screen())
	}
	if n := len(strings.Split(h.m.Screen(), "\n")); n != 24 {
		t.Fatalf("a long notice broke the layout: %d lines", n)
	}
	h.send(tea.WindowSizeMsg{Width: 50, Height: 14})
	for _, word := range []string{"answered", "management", "refused)"} {
		h.mustShow(word) // prose breaks between words
	}
}

// The groups of a first browse fill in while it reads: the first message's
// group is on screen before the browse ends, nothing can be opened from it
// meanwhile, and the full read replaces it.
func TestGroupsFillInWhileTheBrowseReads(t *testing.T) {
	h := newHarness(t, Options{BrowseLimit: 3}, 120, 40)
	h.reader.pause = make(chan struct{})
	next := openPausedBrowse(h, "orders.dlq")
	next = progressUntil(t, h, next, "read so far")
	h.mustShow("1 of 3 messages read so far, 1 group", "rejected", "INVALID_SKU", "reading orders.dlq…")
	if h.m.groups.Inspection() != nil {
		t.Fatal("a group can be opened before the browse ends")
	}
	close(h.reader.pause)
	for h.m.flow.browse != nil {
		msg := next()
		_, next = h.m.Update(msg)
	}
	h.mustShow("held 3 of 5 messages: --limit 3") // which bound, and why
	h.mustNotShow("read so far")
}

// progressUntil feeds a browse's progress to the model until the screen
// shows want; the browse may be paused, so each wait has a deadline.
func progressUntil(t *testing.T, h *harness, next tea.Cmd, want string) tea.Cmd {
	t.Helper()
	for !strings.Contains(h.screen(), want) {
		got := make(chan tea.Msg, 1)
		go func() { got <- next() }()
		select {
		case msg := <-got:
			_, next = h.m.Update(msg)
		case <-time.After(2 * time.Second):
			t.Fatalf("the screen never showed %q:\n%s", want, h.screen())
		}
	}
	return next
}

// A memory budget too small for the queue keeps what fits and says so on
// the status line and in the header, instead of failing or hiding it.
func TestBrowseCutByTheMemoryBudgetSaysSo(t *testing.T) {
	h := newHarness(t, Options{MemoryBudget: 1, IndexBudget: 1}, 160, 40) // as --memory-budget 1B sets both
	h.openQueue("orders.dlq")
	h.mustShow("held 1 of 5 messages: dlqt memory budget (1 B; --memory-budget)")
	insp := h.m.groups.Inspection()
	if insp == nil || insp.Len() != 1 || insp.Batch.Err != nil {
		t.Fatalf("inspection %+v", insp)
	}
}

// TestFullHelpOfTheQueuesListsProposals: P opens the proposals from any
// screen, so the queues' full help names it with the journal and doctor
// (no screen listed it: a responder could not find the approvals).
func TestFullHelpOfTheQueuesListsProposals(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 80, 24)
	h.press("help")
	p := h.m.c.Keys.Proposals.Help()
	h.mustShow(p.Key, p.Desc)
}

// TestAnErrorThatFitsBreaksBetweenWords: an error that fits its three lines
// when broken between words is broken there ("se/cond person" and
// "with/out --demo" were read at 80 columns); only a longer one is cut at
// the edge.
func TestAnErrorThatFitsBreaksBetweenWords(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 80, 24)
	h.press("proposals") // no approvals section: the error says why
	h.mustShow("error: proposals: the config has no approvals section", "second person")
}

// The attempts column shows "—" for a message that died of expiry or
// maxlen (it was never tried), and the journal's outcome column for an
// entry without steps, but the full help's legend explained only "?" and
// "-": it explains all three, whole at 80 columns.
func TestFullHelpLegendExplainsEveryPlaceholder(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 80, 24)
	h.press("help")
	h.mustShow(views.Legend)
	for _, mark := range []string{"? = ", "- = ", "— = "} {
		if !strings.Contains(views.Legend, mark) {
			t.Errorf("the legend %q does not explain %q", views.Legend, strings.TrimSuffix(mark, " = "))
		}
	}
}

// openPausedBrowse opens queue and runs the batch that starts its browse by
// hand: the spinner's first frame, then the browse, which reports its first
// progress and stops until the reader is released. It returns the command
// that waits for the next progress report (nil if none came).
func openPausedBrowse(h *harness, queue string) tea.Cmd {
	h.m.queues.SelectName(queue)
	_, cmd := h.m.Update(keyPress("enter"))
	var next tea.Cmd
	var walk func(tea.Cmd)
	walk = func(c tea.Cmd) {
		if c == nil {
			return
		}
		switch msg := c().(type) {
		case tea.BatchMsg:
			for _, c := range msg {
				walk(c)
			}
		case browseProgressMsg:
			_, next = h.m.Update(msg)
		}
	}
	walk(cmd)
	return next
}
