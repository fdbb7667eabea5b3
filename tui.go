package main

import (
	"context"
	"fmt"
	"os"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/ui"
)

// runTUI opens the full-screen interface on the chosen source.
func (a *app) runTUI(ctx context.Context) error {
	var userKeys []byte
	if len(a.keymap) > 0 {
		userKeys = a.keymap
	}
	keys, err := ui.LoadKeyMap(defaultKeymap, userKeys)
	if err != nil {
		return usageError{fmt.Errorf("key bindings: %w", err)}
	}

	var notice string
	r, closeReader, err := a.openReader(ctx)
	if err != nil && a.demoFallback && !a.demo && a.snapshotPath == "" && brokerUnreachable(err) {
		notice = fmt.Sprintf("no broker answered at %s (%v): showing the bundled DEMO snapshot", a.brokerConfig().AMQPURL, err)
		fmt.Fprintln(os.Stderr, "dlqt:", notice)
		var demo triage.Reader
		demo, err = openDemo()
		r, closeReader = demo, func() {}
	}
	if err != nil {
		return err
	}
	defer closeReader()
	if a.demo {
		notice = "DEMO snapshot: no broker involved"
	}

	j, jerr := a.openJournal()
	if jerr == nil {
		defer j.Close()
	}
	return ui.Run(ctx, ui.Options{
		Reader:      r,
		Vhost:       a.vhost,
		Actor:       a.actor,
		Host:        a.host,
		Journal:     j,
		JournalErr:  jerr,
		Patterns:    a.patterns,
		Redactor:    triage.NewRedactor(),
		BrowseLimit: a.limit,
		StartQueue:  a.queue,
		KeyMap:      keys,
		Notice:      notice,
	})
}
