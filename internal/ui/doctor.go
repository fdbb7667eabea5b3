package ui

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/doctor"
	"github.com/dlqt/dlqt/internal/views"
)

// doctorScreen shows the topology doctor's findings; it owns the diagnosis
// in flight.
type doctorScreen struct {
	*views.Doctor
	returnTo
	plainFilter
	c   *programContext
	req int // diagnosis awaited, 0 when none
}

// doctorMsg answers a diagnosis of the vhost.
type doctorMsg struct {
	id       int
	vhost    string
	findings []doctor.Finding
	err      error
}

func (doctorMsg) owner() screenID { return screenDoctor }

func doctorCmd(ctx context.Context, r triage.Reader, patterns []string, id int) tea.Cmd {
	return func() tea.Msg {
		fs, top, err := doctor.Run(ctx, r, patterns)
		return doctorMsg{id: id, vhost: top.Vhost, findings: fs, err: err}
	}
}

// list is the findings, unless one fills the screen.
func (s *doctorScreen) list() *views.Table {
	if s.Whole() {
		return nil
	}
	return s.Table()
}

// open shows the doctor screen and runs a diagnosis; back returns. A
// replay keeps the screen.
func (s *doctorScreen) open() tea.Cmd {
	if s.c.focus == screenReplay {
		return nil
	}
	s.visit(s.c, screenDoctor)
	return s.run()
}

func (s *doctorScreen) run() tea.Cmd {
	s.req = s.c.nextID()
	s.SetLoading()
	return doctorCmd(s.c.base, s.c.opts.Reader, s.c.opts.Patterns, s.req)
}

func (s *doctorScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	if r, ok := msg.(doctorMsg); ok {
		s.onDoctor(r)
		return s, nil
	}
	return s, listUpdate(s, &s.c.Keys, msg)
}

// key handles the screen's own keys, those the list left.
func (s *doctorScreen) key(k tea.KeyPressMsg) tea.Cmd {
	keys := s.c.Keys
	switch {
	case key.Matches(k, keys.Open):
		s.Open()
	case key.Matches(k, keys.Back):
		if !s.Close() {
			s.leave(s.c)
		}
	case key.Matches(k, keys.Refresh):
		return s.run()
	case key.Matches(k, keys.Left):
		s.Scroll(-fixScrollStep)
	case key.Matches(k, keys.Right):
		s.Scroll(fixScrollStep)
	default:
		return s.Doctor.Update(k)
	}
	return nil
}

// fixScrollStep is how far one key scrolls the fix commands.
const fixScrollStep = 16

func (s *doctorScreen) onDoctor(msg doctorMsg) {
	if msg.id != s.req {
		return // a diagnosis the user re-ran since
	}
	s.req = 0
	if msg.err != nil {
		s.SetFailed()
		s.c.setErr(fmt.Errorf("doctor: reading the topology: %w", msg.err))
		return
	}
	s.c.setErr(nil)
	vhost := msg.vhost
	if vhost == "" {
		vhost = s.c.opts.Vhost
	}
	s.SetFindings(vhost, msg.findings)
}
