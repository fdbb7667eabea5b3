package ui

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"
)

// Run shows the TUI until the user quits or ctx ends. Nothing is logged to
// the screen: errors appear on the status area or come back from Run.
// switchTo is the context the user chose to switch to ("" when they quit):
// the caller connects to it and runs a fresh TUI.
func Run(ctx context.Context, opts Options) (switchTo string, err error) {
	m := newModel(opts)
	m.c.base = ctx
	p := tea.NewProgram(m, tea.WithContext(ctx))
	_, err = p.Run()
	m.stop()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil {
		return "", err
	}
	return m.switchTo, nil
}

// stop ends what the model left running once its program is over.
func (m *Model) stop() {
	m.flow.stop()
	m.flow.closeSpills()
	m.replay.stop() // an unfinished replay aborts and puts its sources back
}

// Session is a TUI whose program someone else runs (`dlqt serve` runs one
// per SSH connection): the model, whether an action is running, which an
// idle timeout must not cut, and what to call once the program ended.
type Session struct {
	Model  tea.Model
	Acting func() bool
	Stop   func()
}

// NewSession builds the TUI for a program run elsewhere; ctx is its base.
func NewSession(ctx context.Context, opts Options) Session {
	m := newModel(opts)
	m.c.base = ctx
	return Session{Model: m, Acting: m.acting.Load, Stop: m.stop}
}
