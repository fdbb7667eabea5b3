package ui

import (
	"os"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// testKeyMap loads the keymap.yaml that main embeds.
func testKeyMap(t testing.TB) KeyMap {
	t.Helper()
	b, err := os.ReadFile("../../keymap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	km, err := LoadKeyMap(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return km
}

// harness drives the root model without a terminal: it runs every command
// synchronously and feeds the messages back, as the program would.
type harness struct {
	t      testing.TB
	m      *Model
	reader *fakeReader
	quit   bool
}

func newHarness(t testing.TB, opts Options, w, h int) *harness {
	t.Helper()
	if opts.Reader == nil {
		opts.Reader = scenario()
	}
	opts.KeyMap = testKeyMap(t)
	if opts.PollEvery == 0 {
		opts.PollEvery = -1 // a test sends pollMsg itself: the harness runs commands synchronously
	}
	if opts.Vhost == "" {
		opts.Vhost = "shop"
	}
	if opts.Actor == "" {
		opts.Actor = "ana@bastion"
	}
	m := newModel(opts)
	m.c.Now = func() time.Time { return fixedNow }
	hs := &harness{t: t, m: m}
	if r, ok := opts.Reader.(*fakeReader); ok {
		hs.reader = r
	}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(m.Init())
	return hs
}

// send delivers one message and runs what it asks for.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

// run executes cmd and everything that follows from it. Spinner ticks are
// dropped: they only animate and would loop forever.
func (h *harness) run(cmd tea.Cmd) {
	h.t.Helper()
	if cmd == nil {
		return
	}
	msg := cmd()
	switch msg := msg.(type) {
	case nil, spinner.TickMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			h.run(c)
		}
	case tea.QuitMsg:
		h.quit = true
	default:
		h.send(msg)
	}
}

// press sends the first key bound to an action, by action name, so tests
// keep working whatever keymap.yaml says.
func (h *harness) press(action string) {
	h.t.Helper()
	for _, a := range actions {
		if a.name == action {
			h.send(keyPress(a.binding(&h.m.c.Keys).Keys()[0]))
			return
		}
	}
	h.t.Fatalf("no action %q", action)
}

// typeText types s key by key.
func (h *harness) typeText(s string) {
	h.t.Helper()
	for _, r := range s {
		h.send(keyPress(string(r)))
	}
}

// keyPress builds the key message a terminal would send for a key name.
func keyPress(name string) tea.KeyPressMsg {
	named := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "up": tea.KeyUp, "down": tea.KeyDown,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd,
		"tab": tea.KeyTab, "backspace": tea.KeyBackspace,
	}
	if c, ok := named[name]; ok {
		return tea.KeyPressMsg{Code: c}
	}
	if name == "space" {
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	if c, ok := strings.CutPrefix(name, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: []rune(c)[0], Mod: tea.ModCtrl}
	}
	return tea.KeyPressMsg{Code: []rune(name)[0], Text: name}
}

// screen is what the terminal shows, without styling.
func (h *harness) screen() string { return ansi.Strip(h.m.Screen()) }

func (h *harness) mustShow(parts ...string) {
	h.t.Helper()
	s := h.screen()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			h.t.Fatalf("screen lacks %q:\n%s", p, s)
		}
	}
}

func (h *harness) mustNotShow(parts ...string) {
	h.t.Helper()
	s := h.screen()
	for _, p := range parts {
		if strings.Contains(s, p) {
			h.t.Fatalf("screen shows %q:\n%s", p, s)
		}
	}
}

// openQueue selects a queue of the list by name and opens it.
func (h *harness) openQueue(name string) {
	h.t.Helper()
	h.m.queues.SelectName(name)
	if q, ok := h.m.queues.Selected(); !ok || q.Name != name {
		h.t.Fatalf("queue %q is not listed", name)
	}
	h.press("open")
}

func ansiWidth(s string) int { return ansi.StringWidth(s) }

// refreshQueuesID starts a queue list request without running it and
// returns its id, so a test can answer it by hand.
func (m *Model) refreshQueuesID() int {
	m.queues.refresh()
	return m.queues.listReq
}
