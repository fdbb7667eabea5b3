package ui

import (
	"cmp"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// browseFlow is the drill-down of one queue: its groups, one group's
// messages, one message. It owns the browse in flight, the tags read for
// the queue and the delivery-cost consent; the groups, messages and message
// screens show what it holds.
type browseFlow struct {
	c        *programContext
	queues   *views.Queues
	groups   *views.Groups
	messages *views.Messages
	message  *views.Message

	browse       *browse // inspection awaited, nil when none
	tagsReq      int     // tags awaited, 0 when none
	tags         map[string][]string
	back         map[string]uint64  // messages the journal says were discarded: the discard's entry
	costAccepted string             // the queue whose delivery cost the user accepted
	spills       *spillSet          // the stores the reads keep whole messages in
	read         *triage.Inspection // the shown read, every message (the groups may show fewer)
	openWhenRead *triage.Group      // the group enter was pressed on while the read went on
}

// shownRead is every message of the shown read, nil before the first.
func (f *browseFlow) shownRead() *triage.Inspection { return f.read }

// openQueue shows the groups screen of name and browses it.
func (f *browseFlow) openQueue(name string) tea.Cmd {
	f.c.focus = screenGroups
	f.tags, f.back, f.tagsReq = nil, nil, 0 // tags of the previous queue are not this one's
	f.groups.Open(name)
	return f.start(name, false)
}

// leave goes from the groups back to the queue list, on the queue left.
func (f *browseFlow) leave() {
	f.stop()
	f.groups.StopLoading()
	f.c.focus = screenQueues
	f.queues.SelectName(f.groups.Queue())
}

// openGroup shows the messages of the selected group.
// While the first read still goes on (its groups grow on screen, and
// nothing can be opened yet) the group opens when the read ends: a key
// pressed a moment early is kept, not dropped.
func (f *browseFlow) openGroup() {
	insp := f.groups.Inspection()
	g, ok := f.groups.Selected()
	switch {
	case ok && insp != nil:
		f.messages.Open(insp, g, f.tags)
		f.c.focus = screenMessages
	case ok && f.browse != nil:
		f.openWhenRead = &g
		f.c.hint = "still reading: the group opens when the read ends"
	}
}

// openAwaited opens the group enter was pressed on during the read, if the
// user is still on the groups screen and the group is still there.
func (f *browseFlow) openAwaited() {
	want := f.openWhenRead
	f.openWhenRead = nil
	if want == nil || f.c.focus != screenGroups {
		return
	}
	f.groups.SelectGroup(want.Reason, want.ReasonCode)
	if g, ok := f.groups.Selected(); ok && g.Reason == want.Reason && g.ReasonCode == want.ReasonCode {
		f.openGroup()
	}
}

// openMessage shows the selected message.
func (f *browseFlow) openMessage() {
	if t, ok := f.messages.Selected(); ok && f.showMessage(t) {
		f.message.Top()
		f.c.focus = screenMessage
	}
}

// showMessage puts t, read back whole from the read's spill store, on the
// message screen. It reads one message from a local file in Update: a
// tenth of a millisecond (BenchmarkReadBackOne: 110 us), not worth a round trip.
func (f *browseFlow) showMessage(t triage.Triaged) bool {
	whole, err := t.Whole()
	if err != nil {
		f.c.setErr(err)
		return false
	}
	if insp := f.groups.Inspection(); insp != nil {
		f.message.SetFrameRules(triage.NewFrameRules(insp.Topology.AppFrames))
	}
	f.message.SetMessage(whole, f.deliveryCost(), f.c.opts.Redactor, f.tags[t.ID])
	return true
}

// chosenOf is insp with only the messages ids names, in its order, as
// they are held (index entries stay index entries: a plan reads back the
// few it must, as a headless plan does). It tests every message of the
// read, so it runs in a tea.Cmd. A group of 100,000 read back whole was
// 100,000 bodies and headers in memory for the plan.
func chosenOf(insp triage.Inspection, ids []string) (*triage.Inspection, error) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	all := insp.List()
	var at []int
	for i := range all.Len() {
		if want[all.At(i).ID] {
			at = append(at, i)
		}
	}
	out := insp
	out.Messages, out.Entries, out.Groups = nil, &triage.Subset{Of: all, Idx: at}, nil
	return &out, nil
}

// readLimit is how far an action's hold reads to find what the user chose:
// --limit when given, else as many messages as the shown read held (the
// whole queue, or what the broker's headroom or the memory budget let it).
func (f *browseFlow) readLimit() int {
	if f.c.opts.BrowseLimit > 0 {
		return f.c.opts.BrowseLimit
	}
	if insp := f.groups.Inspection(); insp != nil {
		return max(insp.Batch.Count(), 1)
	}
	return 0
}

// refresh reads the queue again; the screen stays where it is.
func (f *browseFlow) refresh() tea.Cmd { return f.start(f.groups.Queue(), false) }

// start inspects queue, replacing any browse in flight.
func (f *browseFlow) start(queue string, acceptCost bool) tea.Cmd {
	f.stop()
	b, ctx := newBrowse(f.c.base, f.c.nextID(), queue)
	b.indexBudget = cmp.Or(f.c.opts.IndexBudget, DefaultIndexBudget)
	f.browse = b
	spin := f.groups.StartLoading()
	opts := triage.BrowseOptions{Limit: f.c.opts.BrowseLimit, AcceptDeliveryCost: acceptCost, MemoryBudget: f.c.opts.MemoryBudget}
	if f.spills == nil {
		f.spills = newSpillSet(f.c.opts.Spill)
	}
	return tea.Batch(spin, b.start(ctx, f.c.eng, f.c.opts.Reader, opts, f.c.opts.Redactor, f.spills))
}

func (f *browseFlow) stop() {
	f.openWhenRead = nil
	if f.browse != nil {
		f.browse.cancel()
		f.browse = nil
	}
}

// acceptCost is the delivery-cost consent for queue: the flag, or the
// dialog the user answered yes for this queue.
func (f *browseFlow) acceptCost(queue string) bool {
	a := f.c.opts.Actions
	return (a != nil && a.AcceptDeliveryCost) || f.costAccepted == queue
}

// reading is the browse for the status line: in flight, or its bound.
func (f *browseFlow) reading() string {
	if f.browse != nil {
		return "reading " + sanitize.Line(f.browse.queue) + "…"
	}
	if insp := f.groups.Inspection(); insp != nil {
		return views.Bound(insp.Batch)
	}
	return ""
}

func (f *browseFlow) onProgress(msg browseProgressMsg) tea.Cmd {
	if f.browse == nil || msg.id != f.browse.id {
		return nil // a browse the user walked away from
	}
	if msg.returning > 0 {
		f.groups.SetReturning(msg.returning)
		return f.browse.next()
	}
	f.groups.SetProgress(msg.read, msg.expected)
	if msg.live != nil {
		f.groups.SetLive(msg.live)
	}
	return f.browse.next()
}

// noteChange tells the screens that an action changed queue: their numbers
// of it say how old they are until read again.
func (f *browseFlow) noteChange(queue string) {
	now := f.c.now()
	f.queues.NoteChange(queue, now)
	f.groups.NoteChange(queue, now)
}

// closeSpills closes every spill store; the program is over.
func (f *browseFlow) closeSpills() { _ = f.spills.closeAllBut(nil) }

func (f *browseFlow) onInspected(msg inspectedMsg) tea.Cmd {
	if f.browse == nil || msg.id != f.browse.id {
		f.spills.closeOne(msg.store) // a read the user walked away from
		return nil
	}
	f.browse.cancel() // releases the context; the browse is over
	f.browse = nil
	var cost *triage.DeliveryCostError
	if errors.As(msg.err, &cost) {
		f.spills.closeOne(msg.store)
		f.groups.StopLoading()
		f.c.dialog = &costDialog{flow: f, cost: cost}
		return nil
	}
	if msg.err != nil && msg.insp.Len() == 0 {
		f.spills.closeOne(msg.store)
		f.groups.SetFailed()
		f.c.setErr(fmt.Errorf("reading %s: %w", msg.queue, msg.err))
		return nil
	}
	if msg.err != nil {
		f.c.setErr(fmt.Errorf("browse of %s stopped early after %s (all released): %w",
			msg.queue, views.Plural(msg.insp.Len(), "message"), msg.err))
	} else {
		f.c.setErr(nil)
	}
	if err := f.spills.closeAllBut(msg.store); err != nil { // the reads this one replaces
		f.c.setErr(fmt.Errorf("closing the spill file of an earlier read: %w", err))
	}
	if msg.spillErr != nil {
		f.c.hint = "messages kept whole in memory, not on disk: " + sanitize.Line(msg.spillErr.Error())
	}
	insp := msg.insp
	f.read = &insp
	f.groups.SetInspection(&insp)
	f.queues.NoteRead(msg.queue, &insp, msg.ages) // the queues screen learns the messages' real ages
	f.reselect()
	f.openAwaited()
	return tea.Batch(f.loadTags(&insp), freeMemory)
}

// freeMemory hands what a read left behind back to the system at once (a
// full collection, off Update): the runtime would return it over minutes,
// and a TUI left open on a bastion is judged by the memory it keeps.
func freeMemory() tea.Msg {
	debug.FreeOSMemory()
	return nil
}

// reselect keeps the user where they were after a refresh: same group, same
// message, or the nearest screen up that still exists. The group's members
// index the groups screen's inspection, which a field filter narrows.
func (f *browseFlow) reselect() {
	if f.c.focus != screenMessages && f.c.focus != screenMessage {
		return // a side screen (journal, doctor, replay) opened meanwhile stays
	}
	old := f.messages.Group()
	f.groups.SelectGroup(old.Reason, old.ReasonCode)
	g, ok := f.groups.Selected()
	if !ok || g.Reason != old.Reason || g.ReasonCode != old.ReasonCode {
		f.c.focus = screenGroups
		return
	}
	f.messages.SetGroup(f.groups.Inspection(), g, f.tags)
	if f.c.focus == screenMessage {
		shown := f.message.Shown()
		f.messages.SelectID(shown.ID)
		t, ok := f.messages.Selected()
		if !ok || t.ID != shown.ID || !f.showMessage(t) {
			f.c.focus = screenMessages
			return
		}
	}
}

func (f *browseFlow) deliveryCost() triage.DeliveryCost {
	insp := f.groups.Inspection()
	if insp == nil {
		return triage.DeliveryCost{}
	}
	q, _ := insp.Topology.Queue(insp.Batch.Queue)
	return triage.DeliveryCostOf(q, insp.Topology.Broker)
}

func (f *browseFlow) loadTags(insp *triage.Inspection) tea.Cmd {
	if f.c.opts.Journal == nil || insp.Len() == 0 {
		return nil
	}
	f.tagsReq = f.c.nextID()
	return tagsCmd(f.c.opts.Journal, f.c.vhost(insp), insp.Batch.Queue, insp.List(), f.tagsReq)
}

func (f *browseFlow) onTags(msg tagsMsg) {
	if msg.id != f.tagsReq || msg.queue != f.groups.Queue() {
		return
	}
	f.tagsReq = 0
	if msg.err != nil {
		f.c.setErr(msg.err)
		return
	}
	f.tags, f.back = msg.tags, msg.back
	f.pushTags()
}

// pushTags hands the current tags to the screens that show them.
func (f *browseFlow) pushTags() {
	f.messages.SetTags(f.tags)
	f.message.SetTags(f.tags[f.message.Shown().ID])
}

// startTag asks for a tag of message id, with a journal to keep it in.
func (f *browseFlow) startTag(id string) {
	if err := f.c.noJournal(); err != nil {
		f.c.setErr(fmt.Errorf("tagging is off: %w", err))
		return
	}
	f.c.dialog = newTagPrompt(f, id)
}

func (f *browseFlow) onTagged(msg taggedMsg) {
	if msg.err != nil {
		f.c.setErr(fmt.Errorf("tagging %s: %w", msg.messageID, msg.err))
		return
	}
	if msg.queue != f.groups.Queue() {
		return // written; the screen has moved to another queue
	}
	if f.tags == nil {
		f.tags = map[string][]string{}
	}
	f.tags[msg.messageID] = msg.tags
	f.pushTags()
	f.c.done = "tagged " + sanitize.Line(msg.messageID) + " in the journal; its tags: " +
		sanitize.Line(strings.Join(msg.tags, ", "))
}
