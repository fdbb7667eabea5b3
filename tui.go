package main

import (
	"context"
	"fmt"
	"os"

	"github.com/dlqt/dlqt/internal/broker"
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
		// DEMO first: a narrow status line cuts the end, never the warning.
		notice = fmt.Sprintf("DEMO data: no broker answered at %s (%v)", redactedURL(a.amqpURL), err)
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
		notice = "DEMO data: the bundled snapshot, no broker involved"
	}

	vhost := a.vhost
	if s, ok := r.(*broker.Snapshot); ok {
		vhost = s.File().Topology.Vhost // the snapshot's, not the flag's
	}

	j, jerr := a.openJournal()
	if jerr == nil {
		defer j.Close()
	}
	return ui.Run(ctx, ui.Options{
		Reader:      r,
		Vhost:       vhost,
		Actor:       a.actor,
		Host:        a.host,
		Journal:     j,
		JournalErr:  jerr,
		Patterns:    a.patterns,
		Redactor:    a.redactor(),
		BrowseLimit: a.limit,
		StartQueue:  a.queue,
		KeyMap:      keys,
		Notice:      notice,
	})
}
