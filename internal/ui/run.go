package ui

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"
)

// Run shows the TUI until the user quits or ctx ends. Nothing is logged to
// the screen: errors appear on the status area or come back from Run.
func Run(ctx context.Context, opts Options) error {
	m := newModel(opts)
	m.c.base = ctx
	p := tea.NewProgram(m, tea.WithContext(ctx))
	_, err := p.Run()
	m.flow.stop()
	m.replay.stop() // an unfinished replay aborts and puts its sources back
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
