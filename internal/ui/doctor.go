package ui

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/doctor"
)

// doctorMsg answers a diagnosis of the vhost.
type doctorMsg struct {
	id       int
	vhost    string
	findings []doctor.Finding
	err      error
}

func doctorCmd(ctx context.Context, r triage.Reader, patterns []string, id int) tea.Cmd {
	return func() tea.Msg {
		fs, top, err := doctor.Run(ctx, r, patterns)
		return doctorMsg{id: id, vhost: top.Vhost, findings: fs, err: err}
	}
}

// openDoctor shows the doctor screen and runs a diagnosis; esc comes back.
func (m *Model) openDoctor() tea.Cmd {
	if m.screen == screenReplay {
		return nil
	}
	if m.screen != screenDoctor {
		m.doctorFrom = m.screen
	}
	m.screen = screenDoctor
	return m.runDoctor()
}

func (m *Model) runDoctor() tea.Cmd {
	m.doctorReq = m.nextID()
	m.doctor.SetLoading()
	return doctorCmd(m.base, m.opts.Reader, m.opts.Patterns, m.doctorReq)
}

func (m *Model) onDoctor(msg doctorMsg) tea.Cmd {
	if msg.id != m.doctorReq {
		return nil // a diagnosis the user re-ran since
	}
	m.doctorReq = 0
	if msg.err != nil {
		m.doctor.SetFailed()
		m.setErr(fmt.Errorf("doctor: reading the topology: %w", msg.err))
		return nil
	}
	m.setErr(nil)
	vhost := msg.vhost
	if vhost == "" {
		vhost = m.opts.Vhost
	}
	m.doctor.SetFindings(vhost, msg.findings)
	return nil
}

// doctorKey handles the doctor screen's own keys: open one finding, back
// to the list or to where the user came from, re-run.
func (m *Model) doctorKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	keys := m.ctx.Keys
	switch {
	case key.Matches(k, keys.Open):
		m.doctor.Open()
	case key.Matches(k, keys.Back):
		if m.doctor.Close() {
			return nil, true
		}
		if t := m.doctor.Table(); t.FilterValue() != "" {
			t.ClearFilter()
			return nil, true
		}
		m.screen = m.doctorFrom
	case key.Matches(k, keys.Refresh):
		return m.runDoctor(), true
	default:
		return nil, false
	}
	return nil, true
}
