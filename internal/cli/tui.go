package cli

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/ui"
)

// runTUI opens the full-screen interface on the chosen source. When the
// user switches context in it, the old connection is closed and a fresh
// TUI opens on the new context, so everything (reader, actions, read-only,
// the journal's stamp) is set up as at startup.
func (a *app) runTUI(cmd *cobra.Command) error {
	var userKeys []byte
	if len(a.keymap) > 0 {
		userKeys = a.keymap
	}
	keys, err := ui.LoadKeyMap(a.assets.Keymap, userKeys)
	if err != nil {
		return usageError{fmt.Errorf("key bindings: %w", err)}
	}
	for {
		next, err := a.runTUIOnce(cmd.Context(), keys)
		if err != nil || next == "" {
			return err
		}
		if err := a.useContext(cmd, next); err != nil {
			return err
		}
	}
}

// runTUIOnce runs one TUI on the resolved settings and returns the context
// the user switched to, "" when they quit.
func (a *app) runTUIOnce(ctx context.Context, keys ui.KeyMap) (string, error) {
	opts, closeReader, err := a.tuiOptions(ctx, keys)
	if err != nil {
		return "", err
	}
	defer closeReader()
	if j, ok := opts.Journal.(*sessionJournal); ok && opts.JournalErr == nil && a.session == nil {
		defer j.Close() // the next TUI (a context switch) opens it again
	}
	var kept []string
	opts.Hyperlinks = a.session == nil && ui.TerminalHyperlinks(os.Getenv) // under serve the terminal is the client's, unknown here
	opts.Spill = ui.SpillOptions{Keep: a.keepSpill, Kept: func(path string) { kept = append(kept, path) }}
	if a.session == nil && os.Getenv("GOMEMLIMIT") == "" {
		// one TUI in this process: its budgets bound the heap too (dlqt
		// serve runs many and keeps the runtime's default)
		debug.SetMemoryLimit(tuiMemoryLimit(opts.IndexBudget, opts.MemoryBudget))
	}
	switchTo, err := ui.Run(ctx, opts)
	for _, path := range kept { // after the program: the screen is the terminal's again
		fmt.Fprintln(a.stderr, "dlqt: kept spill file", path)
	}
	return switchTo, err
}

// tuiOptions opens the source the TUI reads and its journal; closeReader
// releases the source once the TUI ended.
func (a *app) tuiOptions(ctx context.Context, keys ui.KeyMap) (opts ui.Options, closeReader func(), err error) {
	var notice string
	keyNotice := a.actAsKeyUser() // before the dial: the leases name the actor too
	r, closeReader, err := a.openReader(ctx)
	if err != nil && a.demoFallback && !a.demo && a.snapshotPath == "" && brokerUnreachable(err) {
		// DEMO first: a narrow status line cuts the end, never the warning.
		notice = fmt.Sprintf("DEMO data: no broker answered at %s (%v)", redactedURL(a.amqpURL), err)
		if which := unanswered(a.amqpURL, a.mgmtURL); which != "" {
			notice = fmt.Sprintf("DEMO data: %s (%v)", which, err)
		}
		fmt.Fprintln(a.stderr, "dlqt:", notice)
		var demo triage.Reader
		demo, err = a.openDemo()
		r, closeReader = demo, func() {}
	}
	if err != nil {
		return ui.Options{}, nil, err
	}
	if a.demo {
		notice = "DEMO data: the bundled snapshot, no broker involved"
	}
	if a.tlsInsecure() && !isSnapshotOrDemo(r) {
		notice = strings.TrimSuffix(insecureWarning+"; "+notice, "; ")
	}
	if keyNotice != "" {
		notice = strings.TrimPrefix(notice+"; ", "; ") + keyNotice
	}

	vhost := a.vhost
	s, isSnapshot := r.(*broker.Snapshot)
	if isSnapshot {
		vhost = s.Head().Topology.Vhost // the snapshot's, not the flag's
	}
	var actions *ui.Actions // a snapshot is read-only: no write side
	var actionsOff string
	var checkAccess func(context.Context) ui.Access
	if live, ok := r.(*broker.Live); ok {
		actions = a.liveActions(live)
		checkAccess = a.tuiAccess(live)
	}
	if a.readOnly {
		actions, actionsOff = nil, "read-only mode is on (--read-only, DLQT_READ_ONLY or read_only in the config): nothing is changed"
	}

	j, jerr := a.openTUIJournal()
	return ui.Options{
		Reader:          r,
		Vhost:           vhost,
		Actor:           a.actor,
		Host:            a.host,
		Journal:         j,
		JournalErr:      jerr,
		Patterns:        a.patterns,
		Redactor:        a.redactor(),
		BrowseLimit:     a.tuiLimit(),
		MemoryBudget:    int64(a.memBudget),
		IndexBudget:     a.indexBudget(),
		StartQueue:      a.queue,
		Clipboard:       a.clipboard(),
		TraceDir:        traceDir(),
		KeyMap:          keys,
		Notice:          notice,
		Actions:         actions,
		ActionsOff:      actionsOff,
		ReadOnly:        a.readOnly,
		CheckAccess:     checkAccess,
		Filter:          a.filterOptions(),
		Health:          a.health,
		TraceURL:        a.traceURL,
		Context:         a.context,
		Contexts:        a.contextChoices(),
		Owners:          a.owners,
		FreeReads:       isSnapshot,
		Approvals:       a.tuiApprovals(),
		Revise:          a.tuiRevise(actions != nil),
		Revisions:       a.useRevisions,
		TeamTrail:       a.tuiTeamTrail(),
		ExportTeamTrail: a.tuiExportTrail(),
	}, closeReader, nil
}

// tuiLimit is the TUI's browse bound: --limit (or browse_limit) when
// given, else 0, the whole queue as far as the broker's headroom and
// --memory-budget allow, as groups and messages --json read it.
func (a *app) tuiLimit() int {
	if a.limitSet {
		return a.limit
	}
	return 0
}

// actAsKeyUser makes the key's user of the users file the actor, as
// propose, approve and run name it; when --key names nobody there, the
// actor stays and the returned notice says why.
func (a *app) actAsKeyUser() (notice string) {
	u, err := a.keyUser()
	if err != nil {
		return fmt.Sprintf("acting as %s: %v", a.actor, err)
	}
	if u != nil {
		a.actor = u.Name
	}
	return ""
}

// liveActions is the TUI's write side on the live broker: the same sweep
// and replay port the headless discard and replay use.
func (a *app) liveActions(live *broker.Live) *ui.Actions {
	return &ui.Actions{
		Sweeper: live,
		OpenReplay: func(ctx context.Context, replayID, queue string, acceptCost bool, holdLimit int) (replay.Port, error) {
			port, err := live.OpenReplay(ctx, replayID, queue)
			if err != nil {
				return nil, err
			}
			port.AcceptDeliveryCost = a.acceptCost || acceptCost
			port.HoldLimit = holdLimit
			return port, nil
		},
		CheckPlan: func(ctx context.Context, plan replay.Plan) error {
			return a.refuseUnwritableDestinations(ctx, live, plan, nil)
		},
		Allow:              a.replayAllow,
		AcceptDeliveryCost: a.acceptCost,
	}
}

// openTUIJournal is openJournal without the wait for the whole check of
// the journal (it grows with the journal): the TUI runs that check after
// its first screen and writes nothing to the journal before it passed.
// Under dlqt serve it is the server's, checked when the server started.
func (a *app) openTUIJournal() (*sessionJournal, error) {
	if a.session != nil {
		return a.openJournal()
	}
	j, err := journal.OpenSharedUnverified(a.journalPath, 2*time.Second, journal.Stamp{Version: buildVersion(), Context: a.context})
	if err != nil {
		return nil, err
	}
	if err := a.checkCheckpointToAct(j); err != nil { // one entry read: it does not wait for the whole check
		j.Close()
		return nil, err
	}
	a.mirrorTo(j)
	return &sessionJournal{Shared: j, details: a.connDetails(nil), checkpoint: a.checkpointSigner()}, nil
}

// tuiMemoryLimit is the Go runtime's soft memory limit for a TUI whose
// index may take index bytes (0: ui.DefaultIndexBudget) and whose reads
// let the broker push a quarter of budget ahead (0: the default budget):
// the index, the budget for the deliveries in flight and what decoding
// them leaves behind, and the filter bars' search cache (224 MiB with the
// defaults). Without it the collector lets the heap grow to twice what is
// live: a read of 1,000,000 messages, whose index and ids take 150 to 200
// MB, peaked at 376 MB of RSS under the limit before this one (352 MiB);
// under this one, 248 MB, in 82 s instead of 72 (the collector ran 352
// times, not 151, at 5% of the CPU). A user's GOMEMLIMIT wins.
func tuiMemoryLimit(index, budget int64) int64 {
	return cmp.Or(index, ui.DefaultIndexBudget) + cmp.Or(budget, triage.DefaultMemoryBudget) + ui.SearchCacheBudget
}

// indexBudget is what the TUI's index entries may take: --memory-budget
// when given, else the TUI's own default (0), which holds a queue of about
// 140,000 messages.
func (a *app) indexBudget() int64 {
	if a.memBudgetSet {
		return int64(a.memBudget)
	}
	return 0
}
