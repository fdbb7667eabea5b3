package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// programContext is what the root shares with every screen, flow and
// dialog (gh-dash's ProgramContext): the views' keys, styles and clock, the
// options, the engine, the size, the request ids, and the few slots a
// screen may set for the root to show: which screen has the focus, the open
// dialog and the footer's status lines. Screens set them in Update, so the
// effect of a key is on screen when Update returns.
type programContext struct {
	*views.Context
	opts   Options
	eng    engine
	base   context.Context // ends when the program does
	colour bool
	width  int
	height int
	lastID int // request ids, increasing

	focus  screenID
	dialog dialog        // nil when none
	broker triage.Broker // as the last queue list read it, for the status line

	lastErr string
	done    string // what the last action wrote, until the next key
	busy    string // an action in flight, e.g. "discarding 3 messages…"
	hint    string // a one-line hint until the next key

	// access is what the user's permissions leave of the actions (access.go).
	access Access

	// check is the journal's whole check, which runs after the first
	// screen; writes to the journal wait for it.
	check journalCheck

	// writers are the flows that change the broker; one at a time.
	writers []interface{ inFlight() bool }
	quit    func() tea.Cmd

	// search keeps the redacted text the filter bars' text~ and tenant=
	// read of the shown read (searchCacheFor).
	search struct {
		of    *triage.Inspection
		cache *filter.SearchCache
	}
}

// SearchCacheBudget is what the filter bars may keep of the redacted
// search text of one read: every message of a read of about 10,000 at
// 1 KiB, so that typing text~ or tenant= over it redacts each message once,
// not once per key; past it, messages are read back and redacted each time.
const SearchCacheBudget = 32 << 20

// searchCacheFor is the search cache of read r, shared by the screens
// that show it; another read gets a new one.
func (c *programContext) searchCacheFor(r *triage.Inspection) *filter.SearchCache {
	if r == nil {
		return nil
	}
	if c.search.of != r {
		c.search.of, c.search.cache = r, filter.NewSearchCache(SearchCacheBudget)
	}
	return c.search.cache
}

// now is the views' clock, so tests that fix it fix the rates too.
func (c *programContext) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *programContext) nextID() int {
	c.lastID++
	return c.lastID
}

func (c *programContext) setErr(err error) {
	if err == nil {
		c.lastErr = ""
		return
	}
	c.lastErr = sanitize.Line(err.Error())
}

// noJournal says why nothing can be journalled, nil when it can.
func (c *programContext) noJournal() error {
	switch {
	case c.opts.Journal != nil:
		return c.check.pending()
	case c.opts.JournalErr != nil:
		return c.opts.JournalErr
	}
	return errors.New("no journal is open")
}

// vhost is the vhost entries name: the flag's, else the inspection's.
func (c *programContext) vhost(insp *triage.Inspection) string {
	if c.opts.Vhost != "" || insp == nil {
		return c.opts.Vhost
	}
	return insp.Batch.Vhost
}

// entry is a journal entry about one message, by the TUI's actor.
func (c *programContext) entry(action triage.Action, vhost, queue, id, reason string) journal.Entry {
	return journal.Entry{Actor: c.opts.Actor, Host: c.opts.Host, Action: action,
		Vhost: vhost, Queue: queue, MessageIDs: []string{id}, Reason: reason}
}

// recorder journals the use cases' records under the TUI's actor.
func (c *programContext) recorder() triage.Recorder {
	return recorder{j: c.opts.Journal, actor: c.opts.Actor, host: c.opts.Host}
}

// recorderFor is recorder with how the TUI chose the ids added to every
// record's details ("group", "where"), as the CLI records a --group:
// the use case is handed ids only, so it cannot say.
func (c *programContext) recorderFor(tg target) triage.Recorder {
	return recorder{j: c.opts.Journal, actor: c.opts.Actor, host: c.opts.Host, chosenBy: tg.chosenBy}
}

// writing reports a discard or replay still running.
func (c *programContext) writing() bool {
	for _, w := range c.writers {
		if w.inFlight() {
			return true
		}
	}
	return false
}

// actionsReady says why a write action cannot run now, or nil.
func (c *programContext) actionsReady(action string) error {
	if err := c.mayAct(action); err != nil {
		return err
	}
	if c.opts.Actions == nil {
		if c.opts.ActionsOff != "" {
			return fmt.Errorf("%s is off: %s", action, c.opts.ActionsOff)
		}
		return fmt.Errorf("%s needs a live broker: this is a snapshot, read-only (run dlqt without --demo or --snapshot)", action)
	}
	if err := c.noJournal(); err != nil {
		return fmt.Errorf("%s is off: it is journalled and %w", action, err)
	}
	for _, w := range c.writers {
		if w.inFlight() {
			return fmt.Errorf("%s waits: another action is still running", action)
		}
	}
	return nil
}

// mayAct refuses every action that changes a queue or shows a secret when
// the TUI is read-only (a viewer's session, or read-only mode). It guards
// the code paths themselves, so a key the keymap failed to remove, or a
// dialog opened before, still cannot reach the broker.
func (c *programContext) mayAct(action string) error {
	switch {
	case c.opts.Role == roleViewer:
		return fmt.Errorf("%s is not allowed: %s is a viewer", action, c.opts.Actor)
	case c.opts.ReadOnly:
		return fmt.Errorf("%s is off: read-only mode", action)
	case c.opts.MayActNow != nil:
		if err := c.opts.MayActNow(); err != nil {
			return fmt.Errorf("%s is not allowed: %w", action, err)
		}
	}
	return c.accessDenied(action)
}

// roleViewer is the `dlqt serve` role that browses and never acts.
const roleViewer = "viewer"

// recorder writes records as journal entries under one actor and host, as
// journal.Recorder does for the headless commands, through the one journal
// method the TUI is given for writing.
type recorder struct {
	j           EntryRecorder
	actor, host string
	chosenBy    map[string]any // details every record gets; nil: none
}

func (r recorder) Record(rec triage.Record) error {
	if len(r.chosenBy) > 0 {
		d := map[string]any{}
		for k, v := range rec.Details {
			d[k] = v
		}
		for k, v := range r.chosenBy {
			d[k] = v
		}
		rec.Details = d
	}
	_, err := r.j.Append(journal.Entry{
		Actor: r.actor, Host: r.host, Action: rec.Action, Vhost: rec.Vhost, Queue: rec.Queue,
		MessageIDs: rec.MessageIDs, Reason: rec.Reason, Details: rec.Details,
	})
	return err
}
