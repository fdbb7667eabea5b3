package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/triagetest"
)

// TestBrowseKeepsNoBodyAndReadsTheMessageBack: after a browse, what the
// screens hold of each message is its index entry (no body, headers,
// payload or timeline); the message screen still shows the redacted
// payload, headers and timeline, read back from the spill file.
func TestBrowseKeepsNoBodyAndReadsTheMessageBack(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	dir := t.TempDir()
	h := newHarness(t, Options{Spill: SpillOptions{Dir: dir}}, 120, 50)
	h.openQueue("orders.dlq")
	insp := h.m.groups.Inspection()
	if insp == nil || insp.Len() != 5 {
		t.Fatalf("inspection %v", insp)
	}
	for _, m := range triagetest.Messages(insp) {
		if m.Message.Body != nil || m.Payload != "" || m.Timeline != nil || len(m.Message.Headers) != 0 || !m.Indexed() {
			t.Fatalf("%s keeps more than its index entry: body %d bytes, payload %q, %d headers",
				m.ID, len(m.Message.Body), m.Payload, len(m.Message.Headers))
		}
		if m.PayloadBytes == 0 {
			t.Errorf("%s lost its size", m.ID)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 || openIn(t, dir) != 1 {
		t.Fatalf("spill files %v named, %d open: want one open and none named (it is unlinked once made)", files, openIn(t, dir))
	}
	openInvalidSKU(h)
	h.m.messages.SelectID("m-1001")
	h.press("open")
	if h.m.c.focus != screenMessage {
		t.Fatalf("screen %d, want the message", h.m.c.focus)
	}
	shown := h.m.message.Shown()
	if shown.ID != "m-1001" || len(shown.Message.Body) == 0 || shown.Payload == "" || len(shown.Timeline) == 0 {
		t.Fatalf("the message screen holds %+v", shown)
	}
	h.mustShow(`"consumer": "fulfilment"`, "a***@example.com", "2 values redacted", "attempt timeline (5 events)")
	h.mustNotShow("hunter2") // redacted, as read the first time
	if v, ok := shown.Message.Headers["x-api-token"]; !ok || v != "tok_live_abcdefghijklmnop" {
		t.Errorf("the headers read back: %v", shown.Message.Headers)
	}
}

// TestTextFilterReadsBackIndexEntries: text~ searches the redacted payload
// and headers of messages kept only as index entries.
func TestTextFilterReadsBackIndexEntries(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{Spill: SpillOptions{Dir: t.TempDir()}}, 120, 40)
	h.openQueue("orders.dlq")
	h.press("filter")
	h.typeText(`text~x-2`)
	insp := h.m.groups.Inspection()
	if insp.Len() != 1 || insp.At(0).ID != "m-1003" {
		t.Fatalf("text~x-2 kept %d messages", insp.Len())
	}
	h.press("back")
	h.press("filter")
	h.typeText(`text~hunter2`) // masked on screen, so never found by a search
	if n := h.m.groups.Inspection().Len(); n != 0 {
		t.Fatalf("text~hunter2 found %d messages in redacted text", n)
	}
}

// openIn is how many files under dir this process holds open, unlinked
// ones included.
func openIn(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, dir+"/") {
			n++
		}
	}
	return n
}

// TestSpillFilesGoWithTheirReads: a read again replaces the previous
// read's file; the program's end closes the last one. Without --keep a
// file has no name once made (nothing stays on disk however dlqt ends);
// with --keep every one stays and is named.
func TestSpillFilesGoWithTheirReads(t *testing.T) {
	for _, keep := range []bool{false, true} {
		dir := t.TempDir()
		var kept []string
		h := newHarness(t, Options{Spill: SpillOptions{Dir: dir, Keep: keep, Kept: func(p string) { kept = append(kept, p) }}}, 120, 40)
		h.openQueue("orders.dlq")
		h.press("refresh")
		if h.m.groups.Inspection() == nil {
			t.Fatal("no read after refresh")
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		if want := map[bool]int{false: 0, true: 2}[keep]; len(files) != want || openIn(t, dir) != 1 {
			t.Fatalf("keep=%v: %d files named and %d open after two reads, want %d named and 1 open", keep, len(files), openIn(t, dir), want)
		}
		h.m.stop()
		files, _ = filepath.Glob(filepath.Join(dir, "*"))
		switch {
		case openIn(t, dir) != 0:
			t.Errorf("keep=%v: %d spill files still open after the end", keep, openIn(t, dir))
		case !keep && (len(files) != 0 || len(kept) != 0):
			t.Errorf("after the end: files %v, kept %v", files, kept)
		case keep && (len(files) != 2 || len(kept) != 2):
			t.Errorf("--keep: files %v, kept %v", files, kept)
		}
		for _, p := range kept {
			if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("kept %s: %v", p, err)
			}
		}
	}
}

// TestStreamedBrowseReadsTheWholeQueueByDefault: with no --limit the TUI
// asks for the whole queue (Limit 0, streamed); with one, it caps and the
// status line names it.
func TestStreamedBrowseReadsTheWholeQueueByDefault(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	r := scenario()
	for i := 5; i < 12; i++ {
		m := rejected("m-20"+string(rune('0'+i)), "order.placed", "INVALID_SKU", 1, 0, `"n":1`)
		r.messages["orders.dlq"] = append(r.messages["orders.dlq"], m)
	}
	r.top.Queues[1].Messages = 12
	h := newHarness(t, Options{Reader: r, Spill: SpillOptions{Dir: t.TempDir()}}, 120, 40)
	h.openQueue("orders.dlq")
	calls := r.calls()
	if last := calls[len(calls)-1]; last.Limit != 0 || last.Each == nil {
		t.Fatalf("browse options %+v, want the whole queue streamed", last)
	}
	if n := h.m.groups.Inspection().Batch.Count(); n != 12 {
		t.Fatalf("read %d of 12", n)
	}
	h.mustNotShow("first ")

	h = newHarness(t, Options{Reader: r, BrowseLimit: 10, Spill: SpillOptions{Dir: t.TempDir()}}, 120, 40)
	h.openQueue("orders.dlq")
	h.mustShow("held 10 of 12 messages: --limit 10")
	if got := h.m.flow.readLimit(); got != 10 {
		t.Errorf("an action's hold reads %d, want --limit's 10", got)
	}
}

// TestReplayPlanRoutesIndexEntriesByTheirHeaders: the dry run of a group
// read as index entries finds each message's original route in its
// headers, read back off Update, and samples the redacted payload.
func TestReplayPlanRoutesIndexEntriesByTheirHeaders(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h, _ := liveHarness(t, 120, 40)
	h.openQueue("orders.dlq")
	if !h.m.groups.Inspection().At(0).Indexed() {
		t.Fatal("the read kept whole messages: the test would prove nothing")
	}
	h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
	_, cmd := h.m.Update(keyPress(h.m.c.Keys.Replay.Keys()[0]))
	if h.m.c.focus == screenReplay || cmd == nil {
		t.Fatal("the plan was made in Update, before its messages were read back")
	}
	h.run(cmd)
	if h.m.c.focus != screenReplay {
		t.Fatalf("screen %d after the read-back, want the replay dry run", h.m.c.focus)
	}
	plan := h.m.replay.Plan()
	if plan.Items.Len() != 3 || len(plan.Unroutable) != 0 {
		t.Fatalf("plan items %d, unroutable %v", plan.Items.Len(), plan.Unroutable)
	}
	h.mustShow("orders:order.placed", "original route (allowed)", "3 messages", `m-1002  rejected/INVALID_SKU  { "message_id": "m-1002"`)
}

// TestTextFilterOverIndexEntriesResolvesOffUpdate: a key press that makes
// a text~ filter over a spilled read returns the command that reads the
// messages back, and changes nothing until its answer; a newer line drops
// an older answer.
func TestTextFilterOverIndexEntriesResolvesOffUpdate(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{Spill: SpillOptions{Dir: t.TempDir()}}, 120, 40)
	h.openQueue("orders.dlq")
	h.press("filter")
	h.typeText("text~x-")
	before := h.m.groups.Inspection().Len()
	_, stale := h.m.Update(keyPress("1")) // text~x-1, not run yet
	if stale == nil || h.m.groups.Inspection().Len() != before {
		t.Fatalf("text~x-1 applied in Update (%d messages shown, %d before)", h.m.groups.Inspection().Len(), before)
	}
	h.mustShow("searching 5 messages (read back from disk)")
	_, cmd := h.m.Update(keyPress("backspace"))
	h.send(keyPress("2")) // text~x-2, run to its end
	if got := triagetest.Messages(h.m.groups.Inspection()); len(got) != 1 || got[0].ID != "m-1003" {
		t.Fatalf("text~x-2 shows %d messages", len(got))
	}
	h.run(stale) // the answer for text~x-1 arrives late: dropped
	h.run(cmd)
	if got := triagetest.Messages(h.m.groups.Inspection()); len(got) != 1 || got[0].ID != "m-1003" {
		t.Fatalf("a stale answer replaced text~x-2: %d messages", len(got))
	}
	h.mustNotShow("searching")
}

// TestNoSpillDirectoryKeepsWholeMessages: when no spill file can be made
// the read keeps whole messages in memory, says so, and still works.
func TestNoSpillDirectoryKeepsWholeMessages(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{Spill: SpillOptions{Dir: notADir}}, 160, 40)
	h.openQueue("orders.dlq")
	insp := h.m.groups.Inspection()
	if insp == nil || insp.Len() != 5 || insp.At(0).Indexed() || insp.At(0).Message.Body == nil {
		t.Fatalf("read %v", insp)
	}
	h.mustShow("messages kept whole in memory, not on disk")
	openInvalidSKU(h)
	h.press("open")
	h.mustShow(`"consumer": "fulfilment"`)
}

// TestTypingATextFilterRedactsEachMessageOnce: the filter bars keep the
// redacted search text of the shown read, so the next text~ line of the
// same read answers without reading a message back: here the spill file
// is gone and text~x- still finds what it found before.
func TestTypingATextFilterRedactsEachMessageOnce(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{Spill: SpillOptions{Dir: t.TempDir()}}, 120, 40)
	h.openQueue("orders.dlq")
	shown := func() (ids []string) {
		for _, m := range triagetest.Messages(h.m.groups.Inspection()) {
			ids = append(ids, m.ID)
		}
		return ids
	}
	h.press("filter")
	h.typeText("text~x-")
	want := shown()
	if len(want) < 2 {
		t.Fatalf("text~x- shows %v", want)
	}
	h.typeText("2")
	if got := shown(); !slices.Equal(got, []string{"m-1003"}) {
		t.Fatalf("text~x-2 shows %v", got)
	}
	if err := h.m.flow.spills.closeAllBut(nil); err != nil { // nothing can be read back any more
		t.Fatal(err)
	}
	h.send(keyPress("backspace"))
	if got := shown(); !slices.Equal(got, want) {
		t.Fatalf("text~x- over the cached text shows %v, before %v", got, want)
	}
}
