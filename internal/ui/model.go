// Package ui is dlqt's terminal interface: the root Bubble Tea model, the
// screens it routes to (each wrapping a view of internal/views), the
// keymap, dialogs and the commands that reach the broker and the journal
// off the Update loop.
package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/views"
)

// Model is the root model. It owns the screens and routes to them: a key
// goes to an open dialog, else to a focused filter bar, else to the
// actions that mean the same on every screen, else to the focused screen;
// a reply goes to the screen whose request it answers.
type Model struct {
	c       *programContext
	help    help.Model
	offKeys []key.Binding // read-only mode: the keys that only say so
	denied  []deniedKey   // the keys the user's permissions took away (access.go)
	screens []screen      // by screenID

	queues    *queuesScreen
	groups    *groupsScreen
	messages  *messagesScreen
	message   *messageScreen
	replay    *replayScreen
	journal   *journalScreen
	doctor    *doctorScreen
	proposals *proposalsScreen
	flow      *browseFlow // the drill-down from a queue to one message
	discard   *discardFlow
	switchTo  string // the context the user chose; Run hands it back
	// acting is whether a discard or replay runs, read by another goroutine
	// (`dlqt serve`'s idle timeout).
	acting atomic.Bool
}

// New returns the root model for opts; it needs no terminal, so tests drive
// it with Update directly.
func New(opts Options) tea.Model { return newModel(opts) }

func newModel(opts Options) *Model {
	if opts.Redactor == nil {
		opts.Redactor = redact.New()
	}
	if opts.Filter.Redactor == nil {
		opts.Filter.Redactor = opts.Redactor // text~ never sees more than the screen
	}
	if opts.JournalErr != nil {
		opts.Journal = nil // a journal that failed to open is none, not a nil pointer in an interface
	}
	colour := os.Getenv("NO_COLOR") == ""
	c := &programContext{
		Context: &views.Context{Keys: opts.KeyMap, Styles: views.NewStyles(true, colour), Redactor: opts.Redactor,
			TraceURL: opts.TraceURL, Hyperlinks: opts.Hyperlinks},
		opts: opts, eng: triageEngine(), base: context.Background(), colour: colour,
		width: 80, height: 24,
	}
	if len(opts.Owners) > 0 {
		c.Owner = opts.Owners.OfGroup
	}
	m := &Model{c: c, help: help.New()}
	c.quit = m.quit
	m.help.Styles = c.Styles.Help
	if opts.Role == roleViewer {
		opts.ReadOnly = true
		c.opts.ReadOnly = true
	}
	if opts.ReadOnly {
		m.removeWriteKeys()
	}
	m.register()
	m.layout()
	return m
}

// register makes the screens and the flows they share. A new screen is
// its own file plus a line here.
func (m *Model) register() {
	c := m.c
	f := &browseFlow{c: c, queues: ref(views.NewQueues(c.Context)), groups: ref(views.NewGroups(c.Context)),
		messages: ref(views.NewMessages(c.Context)), message: ref(views.NewMessage(c.Context))}
	m.flow = f
	c.Fresh = c.opts.PollEvery            // numbers older than a poll say their age
	f.messages.SetReadAt(f.groups.ReadAt) // a group's messages are as old as its read
	f.message.SetReadAt(f.groups.ReadAt)
	m.discard = &discardFlow{c: c, flow: f}
	m.queues = newQueuesScreen(c, f)
	m.discard.refreshList = m.queues.refresh
	m.groups = &groupsScreen{Groups: f.groups, fieldFilter: newFieldFilter(c, f.groups.Table(), f.groups.SetFilter, screenGroups, f.shownRead),
		flow: f, discard: m.discard}
	m.messages = &messagesScreen{Messages: f.messages, fieldFilter: newFieldFilter(c, f.messages.Table(), f.messages.SetFilter, screenMessages, f.shownRead),
		flow: f}
	m.message = &messageScreen{Message: f.message, c: c, flow: f}
	m.replay = &replayScreen{Replay: ref(views.NewReplay(c.Context)), c: c, flow: f, queues: m.queues}
	m.journal = &journalScreen{Journal: ref(views.NewJournal(c.Context)), c: c}
	m.doctor = &doctorScreen{Doctor: ref(views.NewDoctor(c.Context)), c: c}
	m.proposals = &proposalsScreen{Proposals: ref(views.NewProposals(c.Context)), c: c}
	c.writers = []interface{ inFlight() bool }{m.discard, m.replay}
	m.screens = []screen{
		screenQueues: m.queues, screenGroups: m.groups, screenMessages: m.messages, screenMessage: m.message,
		screenReplay: m.replay, screenJournal: m.journal, screenDoctor: m.doctor, screenProposals: m.proposals,
	}
}

// Init lists the parking queues and, with StartQueue, opens that queue's
// groups at once (esc then shows the list).
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.queues.refresh(), tea.RequestBackgroundColor, m.replay.loadInterrupted(), m.queues.pollTick(), m.c.startCheck(), m.c.checkAccess()}
	if m.c.opts.StartQueue != "" {
		cmds = append(cmds, m.flow.openQueue(m.c.opts.StartQueue))
	}
	return tea.Batch(cmds...)
}

// Update never blocks: it changes state and returns commands.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	defer func() { m.acting.Store(m.c.writing()) }()
	for id, s := range m.screens {
		if l, ok := s.(leaver); ok && screenID(id) != m.c.focus {
			l.unfocused()
		}
	}
	m.layout()
	return m, tea.Batch(cmd, searchSteps(m.screens))
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.c.width, m.c.height = msg.Width, msg.Height
	case tea.BackgroundColorMsg:
		m.c.Styles = views.NewStyles(msg.IsDark(), m.c.colour)
		m.help.Styles = m.c.Styles.Help
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		return m.paste(msg)
	case spinner.TickMsg: // only the browse's progress line spins
		return m.to(screenGroups, msg)
	case reply:
		return m.to(msg.owner(), msg)
	case views.SearchStep:
		m.continueSearch(msg)
	case accessMsg:
		m.useAccess(Access(msg))
	}
	return nil
}

// to hands msg to one screen.
func (m *Model) to(id screenID, msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	m.screens[id], cmd = m.screens[id].Update(msg)
	return cmd
}

func (m *Model) focused() screen { return m.screens[m.c.focus] }

// key routes a key press: ctrl+c first, then an open dialog, then a focused
// filter input (so typing never triggers an action), then the actions.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	c := m.c
	c.done, c.hint = "", "" // said once: the next key moves on
	switch {
	case k.String() == emergencyQuit:
		return m.quit()
	case c.dialog != nil:
		return m.toDialog(k)
	case m.typing():
		return m.to(c.focus, k)
	case m.readOnlyKey(k):
		c.hint = "read-only mode: discard, replay and reveal are off"
		if c.opts.Role == roleViewer {
			c.hint = "not allowed: " + c.opts.Actor + " is a viewer (discard, replay and reveal need an operator)"
		}
		return nil
	case m.deniedWhy(k) != "":
		c.hint = m.deniedWhy(k)
		return nil
	}
	if cmd, ok := m.command(k); ok {
		return cmd
	}
	return m.to(c.focus, k)
}

// command runs the actions that mean the same on every screen; ok is false
// for the keys left to the focused screen.
func (m *Model) command(k tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	keys := m.c.Keys
	switch {
	case key.Matches(k, keys.Quit):
		return m.askQuit(), true
	case key.Matches(k, keys.Help):
		m.help.ShowAll = !m.help.ShowAll
		return nil, true
	case m.help.ShowAll && key.Matches(k, keys.Back):
		m.help.ShowAll = false // back closes the help first, and only that
		return nil, true
	case key.Matches(k, keys.Journal):
		return m.journal.open(), true
	case key.Matches(k, keys.Doctor):
		return m.doctor.open(), true
	case key.Matches(k, keys.Proposals):
		return m.proposals.open(), true
	case key.Matches(k, keys.SwitchContext):
		return m.openContexts(), true
	case key.Matches(k, keys.Reveal):
		return m.message.startReveal(), true
	case key.Matches(k, keys.EditPayload):
		return m.message.startEdit(), true
	case key.Matches(k, keys.ResumeReplay):
		m.replay.resume()
		return nil, true
	case key.Matches(k, keys.Discard):
		if tg, ok := m.actionTarget("discard"); ok {
			m.discard.begin(tg)
		}
		return nil, true
	case key.Matches(k, keys.Replay):
		if tg, ok := m.actionTarget("replay"); ok {
			return m.replay.plan(tg), true
		}
		return nil, true
	}
	return nil, false
}

// toDialog gives the open dialog msg; it closes unless it stays or opens
// another.
func (m *Model) toDialog(msg tea.Msg) tea.Cmd {
	d := m.c.dialog
	m.c.dialog = nil
	next, cmd := d.Update(msg)
	if m.c.dialog == nil {
		m.c.dialog = next
	}
	return cmd
}

// typing reports a focused filter bar: it takes every key.
func (m *Model) typing() bool {
	l, ok := m.focused().(lister)
	if !ok {
		return false
	}
	t := l.list()
	return t != nil && t.Filtering()
}

// paste goes where typed text would go.
func (m *Model) paste(p tea.PasteMsg) tea.Cmd {
	switch {
	case m.c.dialog != nil:
		return m.toDialog(p)
	case m.typing():
		return m.to(m.c.focus, p)
	}
	return nil
}

// askQuit quits, unless a replay is running: that is not left by accident.
func (m *Model) askQuit() tea.Cmd {
	if m.replay.run != nil {
		m.c.dialog = &abortConfirm{replay: m.replay, quit: true}
		return nil
	}
	return m.quit()
}

func (m *Model) quit() tea.Cmd {
	m.flow.stop() // the reader releases what it holds
	m.replay.cancel()
	return tea.Quit
}

// target is what an action applies to, always the ids the user saw, so a
// message that arrived after the last read is never touched.
type target struct {
	queue string
	ids   []string
	what  string // "group rejected/INVALID_SKU", "3 marked messages", "message m-1"
	// group is the group the ids are (as shown), for the replay plan; nil
	// for marked or single messages.
	group *triage.GroupKey
	// chosenBy says for the journal how the ids were chosen (group,
	// filter); nil for ids picked one by one.
	chosenBy map[string]any
}

// targeter is a screen an action can take its target from.
type targeter interface {
	target(insp *triage.Inspection) (target, error)
}

// target is the focused screen's: the marked messages, else the selected
// message; on the groups screen the whole group as shown.
func (m *Model) target() (target, error) {
	insp := m.flow.groups.Inspection()
	if insp == nil {
		return target{}, errors.New("nothing is read yet: open a queue first")
	}
	t, ok := m.focused().(targeter)
	if !ok {
		return target{}, errors.New("open a queue's groups or messages first")
	}
	tg, err := t.target(insp)
	tg.queue = insp.Batch.Queue
	return tg, err
}

// actionTarget is what an action applies to, once it may run here; when it
// may not, the reason is on the footer and ok is false.
func (m *Model) actionTarget(action string) (tg target, ok bool) {
	if err := m.c.actionsReady(action); err != nil {
		m.c.setErr(err)
		return tg, false
	}
	if m.flow.groups.Inspection() == nil && m.flow.browse != nil {
		// The first read is on screen as it goes: the key is not an error
		// (the read's end would clear one, and the key would seem lost).
		m.c.hint = "still reading: " + action + " works once the read ends"
		return tg, false
	}
	tg, err := m.target()
	if err != nil {
		m.c.setErr(fmt.Errorf("%s: %w", action, err))
		return tg, false
	}
	return tg, true
}
