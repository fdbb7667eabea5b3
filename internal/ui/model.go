// Package ui is dlqt's terminal interface: the root Bubble Tea model, its
// navigation between the screens of internal/views, the keymap, dialogs and
// the commands that reach the broker and the journal off the Update loop.
package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// HealthThresholds are the queues screen's thresholds (the config's health
// section).
type HealthThresholds = views.HealthThresholds

// Options is everything main.go hands the TUI.
type Options struct {
	Reader      triage.Reader // live broker or snapshot file
	Vhost       string
	Actor, Host string
	Journal     *journal.Journal // nil: tagging shows JournalErr instead
	JournalErr  error
	Patterns    []string // parking name patterns
	Redactor    *redact.Redactor
	BrowseLimit int
	StartQueue  string // --queue: open straight on this queue's groups
	KeyMap      KeyMap // from LoadKeyMap
	Notice      string // shown under the status line, e.g. "showing the demo snapshot"
	// Actions is the live broker's write side (discard, replay); nil on a
	// snapshot, where each action says it needs a live broker.
	Actions *Actions
	// ActionsOff says why Actions is nil when it is not a snapshot, e.g.
	// read-only mode; each refused action says it.
	ActionsOff string
	// ReadOnly removes discard, replay and reveal from the keymap; their keys
	// only say "read-only mode".
	ReadOnly bool
	// Filter is what the filter bar parses field expressions with (the
	// tenant path and the redactor), as --where does.
	Filter filter.Options
	// Health colours the queues screen; zero fields keep the defaults.
	Health views.HealthThresholds
	// PollEvery is how often the queues screen re-reads the topology for
	// rates and trends: 0 means every 5 s, negative never (tests).
	PollEvery time.Duration
}

type screen int

const (
	screenQueues screen = iota
	screenGroups
	screenMessages
	screenMessage
	screenReplay  // dry run, gauge, outcome
	screenJournal // the journal's entries
	screenDoctor  // the topology doctor's findings
)

// Model is the root model. Views share one *views.Context with it.
type Model struct {
	opts   Options
	eng    engine
	base   context.Context
	ctx    *views.Context
	colour bool
	width  int
	height int

	screen   screen
	queues   views.Queues
	groups   views.Groups
	messages views.Messages
	message  views.Message
	replay   views.Replay
	journalV views.Journal
	doctor   views.Doctor
	help     help.Model

	replayFrom  screen // where esc leaves the replay screen for
	journalFrom screen
	doctorFrom  screen

	doctorReq int           // diagnosis awaited, 0 when none
	health    healthLog     // per-queue ingress across polls
	offKeys   []key.Binding // read-only mode: the keys that only say so
	hint      string        // a one-line hint until the next key

	lastID  int     // request ids, increasing
	listReq int     // queue list awaited, 0 when none
	browse  *browse // inspection awaited, nil when none
	tagsReq int     // tags awaited, 0 when none
	tags    map[string][]string

	dialog  any // one of the dialogs of dialog*.go, nil when none
	lastErr string
	done    string // what the last action wrote, until the next key
	busy    string // an action in flight, e.g. "discarding 3 messages…"

	costAccepted string // the queue whose delivery cost the user accepted

	discardReq     int // discard awaited, 0 when none
	journalReq     int // journal read awaited
	interruptedReq int // interrupted replays awaited
	interrupted    []replay.State

	run             *replayRun // the replay in flight, nil when none
	replaySel       triage.Selection
	replayWhat      string
	replayOpts      replay.Options
	quitAfterReplay bool
	fixedReplayID   string // tests: a plan id that does not change
}

// New returns the root model for opts; it needs no terminal, so tests drive
// it with Update directly.
func New(opts Options) tea.Model { return newModel(opts) }

func newModel(opts Options) *Model {
	if opts.Redactor == nil {
		opts.Redactor = redact.New()
	}
	colour := os.Getenv("NO_COLOR") == ""
	ctx := &views.Context{Keys: opts.KeyMap, Styles: views.NewStyles(true, colour)}
	m := &Model{
		opts: opts, eng: triageEngine(), base: context.Background(), ctx: ctx, colour: colour,
		width: 80, height: 24,
		queues: views.NewQueues(ctx), groups: views.NewGroups(ctx),
		messages: views.NewMessages(ctx), message: views.NewMessage(ctx),
		replay: views.NewReplay(ctx), journalV: views.NewJournal(ctx), doctor: views.NewDoctor(ctx),
		help: help.New(), health: newHealthLog(),
	}
	m.help.Styles = ctx.Styles.Help
	m.queues.SetPatterns(opts.Patterns)
	m.queues.SetHealth(opts.Health)
	if opts.Filter.Redactor == nil {
		m.opts.Filter.Redactor = opts.Redactor // text~ never sees more than the screen
	}
	if opts.ReadOnly {
		m.removeWriteKeys()
	}
	m.layout()
	return m
}

// Init lists the parking queues and, with StartQueue, opens that queue's
// groups at once (esc then shows the list).
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.refreshQueues(), tea.RequestBackgroundColor, m.loadInterrupted(), m.pollTick()}
	if m.opts.StartQueue != "" {
		cmds = append(cmds, m.openQueue(m.opts.StartQueue))
	}
	return tea.Batch(cmds...)
}

// now is the views' clock, so tests that fix it fix the rates too.
func (m *Model) now() time.Time {
	if m.ctx.Now != nil {
		return m.ctx.Now()
	}
	return time.Now()
}

func (m *Model) nextID() int {
	m.lastID++
	return m.lastID
}

// Update never blocks: it changes state and returns commands.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if m.screen != screenMessage && m.message.Revealed() {
		m.message.Hide() // however the user left, the clear payload goes
	}
	m.layout()
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return nil
	case tea.BackgroundColorMsg:
		m.setTheme(msg.IsDark())
		return nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		return m.paste(msg)
	case spinner.TickMsg:
		return m.groups.UpdateSpinner(msg)
	case parkingMsg:
		return m.onParking(msg)
	case browseProgressMsg:
		if m.browse == nil || msg.id != m.browse.id {
			return nil // a browse the user walked away from
		}
		m.groups.SetProgress(msg.read, msg.expected)
		return m.browse.next()
	case inspectedMsg:
		return m.onInspected(msg)
	case tagsMsg:
		if msg.id != m.tagsReq || msg.queue != m.groups.Queue() {
			return nil
		}
		m.tagsReq = 0
		if msg.err != nil {
			m.setErr(msg.err)
			return nil
		}
		m.tags = msg.tags
		m.pushTags()
		return nil
	case taggedMsg:
		return m.onTagged(msg)
	case discardedMsg:
		return m.onDiscarded(msg)
	case replayProgressMsg:
		return m.onReplayProgress(msg)
	case replayDoneMsg:
		return m.onReplayDone(msg)
	case journalMsg:
		return m.onJournal(msg)
	case interruptedMsg:
		return m.onInterrupted(msg)
	case doctorMsg:
		return m.onDoctor(msg)
	case pollMsg:
		return m.onPoll()
	case revealedMsg:
		return m.onRevealed(msg)
	}
	return nil
}

func (m *Model) setTheme(isDark bool) {
	m.ctx.Styles = views.NewStyles(isDark, m.colour)
	m.help.Styles = m.ctx.Styles.Help
}

func (m *Model) setErr(err error) {
	if err == nil {
		m.lastErr = ""
		return
	}
	m.lastErr = sanitize.Line(err.Error())
}

// key routes a key press: ctrl+c first, then an open dialog, then a focused
// filter input (so typing never triggers an action), then the actions.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	keys := m.ctx.Keys
	m.done, m.hint = "", "" // said once: the next key moves on
	if k.String() == emergencyQuit {
		return m.quit()
	}
	if m.dialog != nil {
		return m.dialogKey(k)
	}
	if t := m.table(); t != nil && t.Filtering() {
		cmd := t.Update(k)
		m.refilter()
		return cmd
	}
	if m.readOnlyKey(k) {
		m.hint = "read-only mode: discard, replay and reveal are off"
		return nil
	}
	if m.screen == screenDoctor {
		if cmd, ok := m.doctorKey(k); ok {
			return cmd
		}
	}
	if m.screen == screenReplay {
		if cmd, ok := m.replayKey(k); ok {
			return cmd
		}
	}
	if m.screen == screenJournal {
		if cmd, ok := m.journalKey(k); ok {
			return cmd
		}
	}
	switch {
	case key.Matches(k, keys.Quit) && m.run != nil:
		m.dialog = abortConfirm{quit: true} // a running replay is not left by accident
	case key.Matches(k, keys.Quit):
		return m.quit()
	case key.Matches(k, keys.Help):
		m.help.ShowAll = !m.help.ShowAll
	case key.Matches(k, keys.Back):
		return m.back()
	case key.Matches(k, keys.Open):
		return m.open()
	case key.Matches(k, keys.Filter):
		if t := m.table(); t != nil {
			return t.StartFilter()
		}
	case key.Matches(k, keys.Refresh):
		return m.refresh()
	case key.Matches(k, keys.Tag):
		return m.startTag()
	case key.Matches(k, keys.Journal):
		return m.openJournal()
	case key.Matches(k, keys.Doctor):
		return m.openDoctor()
	case key.Matches(k, keys.Reveal):
		return m.startReveal()
	case key.Matches(k, keys.ResumeReplay):
		return m.resumeReplay()
	case key.Matches(k, keys.Mark) && m.screen == screenMessages:
		m.messages.ToggleMark()
	case key.Matches(k, keys.Discard):
		return m.startDiscard()
	case key.Matches(k, keys.Replay):
		return m.startReplay()
	default:
		return m.forward(k)
	}
	return nil
}

// paste goes where typed text would go.
func (m *Model) paste(p tea.PasteMsg) tea.Cmd {
	var cmd tea.Cmd
	switch d := m.dialog.(type) {
	case tagPrompt:
		d.input, cmd = d.input.Update(p)
		m.dialog = d
		return cmd
	case reasonPrompt:
		d.input, cmd = d.input.Update(p)
		m.dialog = d
		return cmd
	case editPrompt:
		d.input, cmd = d.input.Update(p)
		m.dialog = d
		return cmd
	}
	if t := m.table(); t != nil && t.Filtering() {
		cmd := t.Update(p)
		m.refilter()
		return cmd
	}
	return nil
}

func (m *Model) forward(msg tea.Msg) tea.Cmd {
	switch m.screen {
	case screenQueues:
		return m.queues.Update(msg)
	case screenGroups:
		return m.groups.Update(msg)
	case screenMessages:
		return m.messages.Update(msg)
	case screenJournal:
		return m.journalV.Update(msg)
	case screenDoctor:
		return m.doctor.Update(msg)
	case screenReplay:
		return nil
	default:
		return m.message.Update(msg)
	}
}

// table is the list of the current screen, nil on the message screen.
func (m *Model) table() *views.Table {
	switch m.screen {
	case screenQueues:
		return m.queues.Table()
	case screenGroups:
		return m.groups.Table()
	case screenMessages:
		return m.messages.Table()
	case screenJournal:
		return m.journalV.Table()
	case screenDoctor:
		if !m.doctor.Whole() {
			return m.doctor.Table()
		}
	}
	return nil
}

func (m *Model) quit() tea.Cmd {
	m.stopBrowse() // the reader releases what it holds
	if m.run != nil {
		m.run.cancel() // aborts; Run waits for the sources to be put back
	}
	return tea.Quit
}

func (m *Model) back() tea.Cmd {
	if t := m.table(); t != nil && t.FilterValue() != "" {
		t.ClearFilter()
		m.refilter()
		return nil
	}
	switch m.screen {
	case screenGroups:
		m.stopBrowse()
		m.groups.StopLoading()
		m.screen = screenQueues
		m.queues.SelectName(m.groups.Queue())
	case screenMessages:
		m.screen = screenGroups
	case screenMessage:
		m.message.Hide() // a reveal lasts while the message is on screen
		m.screen = screenMessages
	}
	return nil
}

func (m *Model) open() tea.Cmd {
	switch m.screen {
	case screenQueues:
		if q, ok := m.queues.Selected(); ok {
			return m.openQueue(q.Name)
		}
	case screenGroups:
		insp := m.groups.Inspection()
		if g, ok := m.groups.Selected(); ok && insp != nil {
			m.messages.Open(insp, g, m.tags)
			m.screen = screenMessages
		}
	case screenMessages:
		if t, ok := m.messages.Selected(); ok {
			m.message.SetMessage(t, m.deliveryLimit(), m.opts.Redactor, m.tags[t.ID])
			m.screen = screenMessage
		}
	}
	return nil
}

func (m *Model) deliveryLimit() int64 {
	insp := m.groups.Inspection()
	if insp == nil {
		return 0
	}
	q, _ := insp.Topology.Queue(insp.Batch.Queue)
	return q.DeliveryLimit
}

func (m *Model) refresh() tea.Cmd {
	if m.screen == screenQueues {
		m.queues.SetLoading(true)
		return m.refreshQueues()
	}
	if m.screen == screenReplay {
		return nil
	}
	return m.startBrowse(m.groups.Queue(), false)
}

func (m *Model) refreshQueues() tea.Cmd {
	m.listReq = m.nextID()
	return listCmd(m.base, m.eng, m.opts.Reader, m.opts.Patterns, m.listReq, m.now)
}

func (m *Model) onParking(msg parkingMsg) tea.Cmd {
	if msg.id != m.listReq {
		return nil
	}
	m.listReq = 0
	if msg.err != nil {
		m.queues.SetFailed()
		m.setErr(fmt.Errorf("listing parking queues: %w", msg.err))
		return nil
	}
	m.setErr(nil) // the last error is the last operation's: this one worked
	m.queues.SetQueues(msg.queues, m.health.record(msg.queues, msg.at))
	m.queues.SetDoctor("doctor: " + views.SummaryLine(msg.findings))
	if m.screen != screenQueues {
		m.queues.SelectName(m.groups.Queue())
	}
	return nil
}

// openQueue shows the groups screen of name and browses it.
func (m *Model) openQueue(name string) tea.Cmd {
	m.screen = screenGroups
	m.tags, m.tagsReq = nil, 0 // tags of the previous queue are not this one's
	m.groups.Open(name)
	return m.startBrowse(name, false)
}

// startBrowse inspects queue, replacing any browse in flight.
func (m *Model) startBrowse(queue string, acceptCost bool) tea.Cmd {
	m.stopBrowse()
	b, ctx := newBrowse(m.base, m.nextID(), queue)
	m.browse = b
	spin := m.groups.StartLoading()
	opts := triage.BrowseOptions{Limit: m.opts.BrowseLimit, AcceptDeliveryCost: acceptCost}
	return tea.Batch(spin, b.start(ctx, m.eng, m.opts.Reader, opts, m.opts.Redactor))
}

func (m *Model) stopBrowse() {
	if m.browse != nil {
		m.browse.cancel()
		m.browse = nil
	}
}

func (m *Model) onInspected(msg inspectedMsg) tea.Cmd {
	if m.browse == nil || msg.id != m.browse.id {
		return nil
	}
	m.browse.cancel() // releases the context; the browse is over
	m.browse = nil
	var cost *triage.DeliveryCostError
	if errors.As(msg.err, &cost) {
		m.groups.StopLoading()
		m.dialog = costDialog{cost: cost}
		return nil
	}
	if msg.err != nil && len(msg.insp.Messages) == 0 {
		m.groups.SetFailed()
		m.setErr(fmt.Errorf("reading %s: %w", msg.queue, msg.err))
		return nil
	}
	if msg.err != nil {
		m.setErr(fmt.Errorf("browse of %s stopped early after %s (all released): %w",
			msg.queue, views.Plural(len(msg.insp.Messages), "message"), msg.err))
	} else {
		m.setErr(nil)
	}
	insp := msg.insp
	m.groups.SetInspection(&insp)
	m.reselect(&insp)
	return m.loadTags(&insp)
}

// reselect keeps the user where they were after a refresh: same group, same
// message, or the nearest screen up that still exists.
func (m *Model) reselect(insp *triage.Inspection) {
	if m.screen == screenGroups || m.screen == screenQueues {
		return
	}
	old := m.messages.Group()
	m.groups.SelectGroup(old.Reason, old.ReasonCode)
	g, ok := m.groups.Selected()
	if !ok || g.Reason != old.Reason || g.ReasonCode != old.ReasonCode {
		m.screen = screenGroups
		return
	}
	m.messages.SetGroup(insp, g, m.tags)
	if m.screen == screenMessage {
		shown := m.message.Shown()
		m.messages.SelectID(shown.ID)
		t, ok := m.messages.Selected()
		if !ok || t.ID != shown.ID {
			m.screen = screenMessages
			return
		}
		m.message.SetMessage(t, m.deliveryLimit(), m.opts.Redactor, m.tags[t.ID])
	}
}

func (m *Model) vhost(insp *triage.Inspection) string {
	if m.opts.Vhost != "" || insp == nil {
		return m.opts.Vhost
	}
	return insp.Batch.Vhost
}

func (m *Model) loadTags(insp *triage.Inspection) tea.Cmd {
	if m.opts.Journal == nil || len(insp.Messages) == 0 {
		return nil
	}
	ids := make([]string, len(insp.Messages))
	for i, t := range insp.Messages {
		ids[i] = t.ID
	}
	m.tagsReq = m.nextID()
	return tagsCmd(m.opts.Journal, m.vhost(insp), insp.Batch.Queue, ids, m.tagsReq)
}

// pushTags hands the current tags to the screens that show them.
func (m *Model) pushTags() {
	m.messages.SetTags(m.tags)
	m.message.SetTags(m.tags[m.message.Shown().ID])
}

func (m *Model) startTag() tea.Cmd {
	var id string
	switch m.screen {
	case screenMessages:
		t, ok := m.messages.Selected()
		if !ok {
			return nil
		}
		id = t.ID
	case screenMessage:
		id = m.message.Shown().ID
	default:
		return nil
	}
	if m.opts.Journal == nil {
		err := m.opts.JournalErr
		if err == nil {
			err = errors.New("no journal is open")
		}
		m.setErr(fmt.Errorf("tagging is off: %w", err))
		return nil
	}
	m.dialog = newTagPrompt(m.ctx, m.groups.Queue(), id, m.width)
	return nil
}

// dialogKey gives the open dialog every key.
func (m *Model) dialogKey(k tea.KeyPressMsg) tea.Cmd {
	switch d := m.dialog.(type) {
	case costDialog:
		m.dialog = nil
		if key.Matches(k, m.ctx.Keys.Confirm) {
			m.costAccepted = d.cost.Queue
			return m.startBrowse(d.cost.Queue, true)
		}
		if m.groups.Inspection() == nil { // nothing read yet: leave the queue
			m.screen = screenQueues
			m.queues.SelectName(d.cost.Queue)
		}
		return nil
	case tagPrompt:
		switch k.String() {
		case "esc":
			m.dialog = nil
			return nil
		case "enter":
			tag := strings.TrimSpace(d.input.Value())
			m.dialog = nil
			if tag == "" {
				return nil
			}
			insp := m.groups.Inspection()
			return tagCmd(m.opts.Journal, journal.Entry{
				Actor: m.opts.Actor, Host: m.opts.Host, Action: triage.ActionTag,
				Vhost: m.vhost(insp), Queue: d.queue, MessageIDs: []string{d.messageID}, Reason: tag,
			})
		}
		var cmd tea.Cmd
		d.input, cmd = d.input.Update(k)
		m.dialog = d
		return cmd
	case reasonPrompt:
		return m.reasonKey(d, k)
	case discardConfirm:
		return m.confirmKey(d, k)
	case editPrompt:
		return m.editKey(d, k)
	case startConfirm:
		return m.startKey(d, k)
	case abortConfirm:
		return m.abortKey(d, k)
	case revealConfirm:
		return m.revealKey(d, k)
	}
	return nil
}

func (m *Model) onTagged(msg taggedMsg) tea.Cmd {
	if msg.err != nil {
		m.setErr(fmt.Errorf("tagging %s: %w", msg.messageID, msg.err))
		return nil
	}
	if msg.queue != m.groups.Queue() {
		return nil // written; the screen has moved to another queue
	}
	if m.tags == nil {
		m.tags = map[string][]string{}
	}
	m.tags[msg.messageID] = msg.tags
	m.pushTags()
	m.done = "tagged " + sanitize.Line(msg.messageID) + " in the journal; its tags: " +
		sanitize.Line(strings.Join(msg.tags, ", "))
	return nil
}
