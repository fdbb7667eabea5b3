package ui

import (
	"context"
	"io"
	"time"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/views"
)

// HealthThresholds are the queues screen's thresholds (the config's health
// section).
type HealthThresholds = views.HealthThresholds

// SpillOptions place a browse's spill store (package spill).
type SpillOptions struct {
	Dir  string            // "" = dlqt's folder of the user's cache directory
	Keep bool              // --keep: leave each file when its read is done
	Kept func(path string) // told each kept file once it is closed
}

// Options is everything main.go hands the TUI.
type Options struct {
	Reader      triage.Reader // live broker or snapshot file
	Vhost       string
	Actor, Host string
	// Journal is where tags, reveals and actions are written; nil (or a
	// JournalErr) turns them off and says why.
	Journal    Journal
	JournalErr error
	// TeamTrail reads the team's audit stream for the journal screen's
	// toggle (keymap team_trail); nil when no stream is configured.
	TeamTrail func() (TeamTrail, error)
	// ExportTeamTrail writes the team's audit stream as JSONL records, as
	// dlqt journal export --stream does, for E on the team's trail.
	ExportTeamTrail func(w io.Writer) (int, error)
	Patterns        []string // parking name patterns
	Redactor        *redact.Redactor
	BrowseLimit     int
	// MemoryBudget bounds the bytes of messages a browse keeps (0: the
	// default); a read it cuts short says so on the status line.
	MemoryBudget int64
	// IndexBudget bounds the bytes of the index entries a spilled browse
	// keeps (0: MemoryBudget when set by the user, else DefaultIndexBudget).
	IndexBudget int64
	// Spill is where a browse keeps each message whole, on disk, while
	// memory holds its index entry.
	Spill      SpillOptions
	StartQueue string // --queue: open straight on this queue's groups
	// Clipboard says the terminal takes OSC 52, so the message screen's copy
	// of a stack trace goes to its clipboard; else to a file in TraceDir
	// (the user's state directory; "": the temporary directory).
	Clipboard bool
	TraceDir  string
	KeyMap    KeyMap // from LoadKeyMap
	Notice    string // shown under the status line, e.g. "showing the demo snapshot"
	// Actions is the live broker's write side (discard, replay); nil on a
	// snapshot, where each action says it needs a live broker.
	Actions *Actions
	// ActionsOff says why Actions is nil when it is not a snapshot, e.g.
	// read-only mode; each refused action says it.
	ActionsOff string
	// ReadOnly removes discard, replay and reveal from the keymap; their keys
	// only say "read-only mode".
	ReadOnly bool
	// CheckAccess, on a live broker, says which actions the user's
	// permissions rule out; asked once, off the Update loop, as the TUI
	// starts (access.go). Nil: nothing is checked.
	CheckAccess func(ctx context.Context) Access
	// Role is the SSH user's role under `dlqt serve` ("viewer", "operator"),
	// "" for a local TUI; a viewer is ReadOnly and the status line says so.
	Role string
	// MayActNow, under `dlqt serve`, says why the session's user may no
	// longer act (the users file was reloaded without their key, or with a
	// lesser role); asked as each action starts. Nil: Role holds for good.
	MayActNow func() error
	// Filter is what the filter bar parses field expressions with (the
	// tenant path and the redactor), as --where does.
	Filter filter.Options
	// TraceURL links a message's trace id on its page (the config's
	// trace_url); Hyperlinks makes that an OSC 8 link (TerminalHyperlinks).
	TraceURL   triage.TraceURL
	Hyperlinks bool
	// Health colours the queues screen; zero fields keep the defaults.
	Health views.HealthThresholds
	// PollEvery is how often the queues screen re-reads the topology for
	// rates and trends: 0 means every 5 s, negative never (tests).
	PollEvery time.Duration
	// FreeReads says the reader is a file (a snapshot): reading a queue
	// costs no broker anything, so the queues screen reads each one for its
	// oldest message's death time instead of saying it is unread.
	FreeReads bool
	// Context is the named broker context in use ("" none), shown first on
	// the status line; Contexts are the config file's, offered by the
	// switch_context key (contexts.go).
	Context  string
	Contexts []ContextChoice
	// Owners give groups to teams (the config's owners section); the
	// groups screen shows an owner column when there are any.
	Owners approval.Owners
	// Approvals is the four-eyes workflow; nil when the config asks no
	// second person for anything.
	Approvals *Approvals
	// Revise journals an edit of msg's body as a revision (or, when the
	// policy gates edits, its proposal) and says what it did; nil turns
	// the edit_payload key off (a snapshot, or over SSH, where $EDITOR
	// would run on the server).
	Revise func(ctx context.Context, queue string, msg triage.Triaged, body []byte, reason string) (string, error)
	// Revisions makes a replay publish the latest approved revision of
	// each edited message of its plan, as the headless replay does.
	Revisions func(plan *replay.Plan) error
}

// Approvals is what the TUI needs of the approval workflow (internal/cli
// provides it, on the same code as the headless commands).
type Approvals struct {
	// Needs reports whether action (replay, discard) of count messages
	// needs a second person: y then proposes instead of acting.
	Needs func(action string, count int) bool
	// Propose journals a proposal as the user and returns its id.
	Propose func(ctx context.Context, action, queue string, msgs []triage.Triaged, plan approval.Plan) (string, error)
	// Proposals reads every proposal from the journal.
	Proposals func() ([]approval.State, error)
	// Approvers, when set, names who may approve a proposal for teams
	// (the proposer never may), for the proposal's own screen. It is
	// called with the proposals read, off Update: it may read a file.
	Approvers func(teams []string, proposer string) []string
	// Run carries out an approved proposal as the user, exactly as
	// `dlqt run ID --yes`, and says how it ended.
	Run func(ctx context.Context, id string) (string, error)
	// Reveal uses this user's approved reveal proposal of the message
	// (journaling its run: one approval, one reveal) and reports true;
	// else it names the pending proposal, proposing one if none waits.
	Reveal func(ctx context.Context, queue string, msg triage.Triaged) (proposal string, approved bool, err error)
}

// The TUI's uses of the journal, each as small as its caller needs;
// *journal.Journal is all of them.
type (
	// EntryRecorder appends an entry and returns it as written (with its seq).
	EntryRecorder interface {
		Append(journal.Entry) (journal.Entry, error)
	}
	// TagStore reads the tags of messages by id.
	TagStore interface {
		Tags(vhost, queue string, ids []string) (map[string][]string, error)
	}
	// EntryReader reads the journal for its screen a page at a time (see
	// journal.Journal.Page).
	EntryReader interface {
		Path() string
		Page(before uint64, n int) ([]journal.Entry, uint64, error)
	}
	// ReplayLog is what the replays that started and never finished are
	// found in (replay.Interrupted reads it).
	ReplayLog interface {
		replay.Journal
	}
	// Journal is every use together, what Options takes.
	Journal interface {
		EntryRecorder
		TagStore
		EntryReader
		ReplayLog
	}
)

var (
	_ Journal = (*journal.Journal)(nil)
	// the banner's replay.Interrupted reads the index, not every entry
	_ replay.IndexedJournal = (*journal.Shared)(nil)
	_ replay.IndexedJournal = (*journal.Journal)(nil)
)

// Actions is the live broker's write side, handed in by main. A snapshot
// or the demo has none: every action then says it needs a live broker.
type Actions struct {
	Sweeper triage.Sweeper
	// OpenReplay prepares the broker side of replay replayID of queue.
	// acceptCost is the user's consent to the delivery cost of holding a
	// quorum queue with a delivery limit. holdLimit is how many messages
	// the read the selection was made in held: the hold reads as far.
	OpenReplay func(ctx context.Context, replayID, queue string, acceptCost bool, holdLimit int) (replay.Port, error)
	// CheckPlan says why the user may not run plan (a destination its
	// permissions do not let it write to), asked before the replay holds
	// anything; nil checks nothing.
	CheckPlan func(ctx context.Context, plan replay.Plan) error
	// Allow is replay.allow from the config file.
	Allow []string
	// AcceptDeliveryCost is --accept-delivery-cost.
	AcceptDeliveryCost bool
}

// TeamTrail is the team's audit stream as the journal screen shows it:
// every writer's entries, in stream order, and how their chains stand.
type TeamTrail struct {
	Stream  string
	Entries []TeamEntry
	Summary string // "14 records of 2 writers, every chain intact", or the first problem
	Broken  bool
}

// TeamEntry is an entry of the audit stream with its writer.
type TeamEntry struct {
	journal.Entry
	Writer string
	Offset int64
	// Void says why the record counts for nothing ("" when it counts):
	// forged, out of its writer's chain, or an attempt its writer
	// replaced.
	Void string
}
