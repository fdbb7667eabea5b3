// Package replay sends selected parking-queue messages back to a route:
// the plan (dry run), the allowlist, the headers of a replayed copy, the
// paced run behind its ports, and a replay's state read back from the
// journal for a resume.
package replay

import (
	"context"
	"math"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// A replay sends selected parking-queue messages back to a route, guided:
// plan (dry run, no I/O) -> canary of a few messages at a low rate ->
// observation window -> ramp up (the operator, or headless straight to the
// ceiling) -> done, with pause, resume and abort at any time. A source
// message is acked only after its copy was confirmed at the destination and
// not returned, and the replay's state is journalled so that a crash can be
// resumed: nothing is lost, a duplicate is possible (at-least-once).

// Defaults of Options.
const (
	DefaultRate           = 10.0 // msg/s ceiling
	DefaultCanary         = 5
	DefaultCanaryRate     = 1.0 // msg/s, capped by the ceiling
	DefaultObserve        = 30 * time.Second
	DefaultConfirmTimeout = 30 * time.Second
	// DefaultBaseline is what the command line counts the destination's
	// own dead letters for before the canary (Options.Baseline's zero
	// value counts only during the hold).
	DefaultBaseline = 5 * time.Second
)

// UsableRate says whether perSecond can pace a replay: above zero and
// finite. A flag parses "NaN" and "Inf" as numbers, and NaN passed a
// "<= 0" check.
func UsableRate(perSecond float64) bool {
	return perSecond > 0 && !math.IsInf(perSecond, 0)
}

// Options steer one replay. Zero values take the defaults above.
type Options struct {
	To         *triage.Route `json:"to,omitempty"`    // nil: each message's original route
	Rate       float64       `json:"rate"`            // ceiling, msg/s
	Canary     int           `json:"canary"`          // messages in the canary
	CanaryRate float64       `json:"canary_rate"`     // msg/s during the canary
	Observe    time.Duration `json:"observe"`         // observation window after the canary
	MaxBacklog int           `json:"max_backlog"`     // stop when the destination depth grows by more; 0 = no limit
	Allow      []string      `json:"allow,omitempty"` // replay.allow globs over EXCHANGE:ROUTING_KEY
	// AutoRamp is the headless policy: after a clean observation go on at
	// Rate. Without it the replay waits for RampUp in PhaseAwaitingRamp.
	AutoRamp       bool          `json:"auto_ramp,omitempty"`
	ConfirmTimeout time.Duration `json:"confirm_timeout"` // a publish unconfirmed this long counts as returned
	// Baseline is how long the run counts the destination's own dead
	// letters before its canary (besides the hold): during a live incident
	// a destination keeps dead-lettering messages of its own, and only
	// what comes above that rate is the replay's collateral. 0: the hold
	// alone is the baseline.
	Baseline time.Duration `json:"baseline,omitempty"`
}

// Item is one message of a plan and where it goes.
type Item struct {
	ID       string       `json:"id"`
	Route    triage.Route `json:"route"`
	Original bool         `json:"original"` // Route is the message's own original route
	// Revision is the edited body published instead of the parked one
	// (revision.go); nil publishes the message as it is.
	Revision *Revision `json:"revision,omitempty"`
	// BodySHA256 is the body an approved proposal named this message by;
	// a message held with another body under the same id is not replayed
	// (revision.go). Empty when no proposal decided.
	BodySHA256 string `json:"body_sha256,omitempty"`
}

// Destination is one distinct route of a plan, for the dry run.
type Destination struct {
	Route    triage.Route `json:"route"`
	Count    int          `json:"count"`
	Original bool         `json:"original"` // every message sent there came from there
	Allowed  bool         `json:"allowed"`  // original, or matched by replay.allow
	Queues   []string     `json:"queues"`   // what the route reaches in the topology
	// RetryBucket is set when the route is a retry bucket (the first death
	// of a retry chain): it names the bucket and the work queue it feeds,
	// whose route (Next) is offered as a destination.
	RetryBucket *triage.RetryHop `json:"retry_bucket,omitempty"`
	// FedBy names the retry bucket whose dead-letter route this is, when
	// it was chosen for messages whose original route is that bucket: it
	// needs no replay.allow pattern, being where the bucket sends them.
	FedBy string `json:"fed_by,omitempty"`
	own   bool   // every message's original route or its bucket's next hop
}

// Plan is a dry run: what would be replayed, where to, and whether it
// may run. Problems empty means it may.
type Plan struct {
	// at is where each item's message is in the inspection the plan was
	// made from (NewPlan), for the checks that read it again.
	at           []int32
	ID           string           `json:"id"`
	Vhost        string           `json:"vhost"`
	Queue        string           `json:"queue"`
	Selection    triage.Selection `json:"selection"`
	Items        Items            `json:"items"`
	Destinations []Destination    `json:"destinations"`
	// DestinationQueues are all queues the plan's routes reach: their depth
	// is the destination backlog.
	DestinationQueues []string       `json:"destination_queues"`
	Allowed           bool           `json:"allowed"`    // every destination allowed
	Disallowed        []triage.Route `json:"disallowed"` // destinations replay.allow does not match
	Unroutable        []string       `json:"unroutable"` // ids with no known original route (need To)
	Missing           []string       `json:"missing"`    // selected ids not in the inspection
	Problems          []string       `json:"problems"`   // why it may not run
	// Bounded are the destination queues with a length limit; Warnings say
	// how near it they are (they do not stop the plan).
	Bounded  []BoundedQueue   `json:"bounded,omitempty"`
	Warnings []string         `json:"warnings,omitempty"`
	Options  Options          `json:"options"`
	Sample   []triage.Triaged `json:"-"` // a few selected messages, redacted, for the dry run
	// HoldUpTo is how many messages from the head of the queue the hold
	// reads: up to the last selected one (HoldLimit). 0: no bound.
	HoldUpTo int `json:"hold_up_to,omitempty"`
	// ReadDepth is the ready count the plan's read began with: the hold
	// waits for that read's messages to be back before it reads, so it
	// finds them in their order (a quorum queue returns a read of several
	// consumers one consumer at a time, and a hold that read the first
	// two back missed a chosen one).
	ReadDepth int `json:"read_depth,omitempty"`
	// AtLimit counts the messages the hold takes that have no delivery left
	// on a quorum queue with a delivery limit: a lost hold drops them.
	AtLimit int `json:"at_limit,omitempty"`
	// Prior is set when resuming an interrupted replay from the journal.
	Prior *Prior `json:"-"`
	// Selecting is set on a replay that selects while it holds
	// (NewSelectingPlan): Items begins empty, and the run adds each
	// message its hold takes.
	Selecting bool    `json:"selecting,omitempty"`
	choose    Chooser // a selecting plan's: the selection, message by message
}

// Prior is what an interrupted replay already did, from the journal.
type Prior struct {
	Confirmed    []string           // confirmed at the destination: ack, never publish again
	Published    []string           // sent with no answer journalled: the destination may have them
	Settled      map[string]Outcome // final outcomes: leave alone
	CanaryPassed bool               // the observation window passed cleanly
}

// Outcome is how a message's replay ended.
type Outcome string

const (
	OutcomeResolved    Outcome = "resolved"     // confirmed at the destination, source acked
	OutcomeFailedAgain Outcome = "failed-again" // came back into a parking queue
	OutcomeReturned    Outcome = "returned"     // returned, nacked or unconfirmed: source kept
	// OutcomeCollateral is journalled for a message that was NOT replayed
	// but was dead-lettered from a destination into a watched parking queue
	// during the replay (a full bounded queue dropping its head): the
	// replay's damage to others.
	OutcomeCollateral Outcome = "collateral"
	OutcomeUntouched  Outcome = "untouched" // never published: source kept
	// OutcomeConfirmed is journalled before a source is acked; once the ack
	// went out, resolved is journalled for it. A confirmed message whose ack
	// failed stays confirmed: a resume acks its source without a new publish.
	OutcomeConfirmed Outcome = "confirmed"
	// OutcomePublished is journalled for each batch before it is sent and
	// stays the latest outcome of a message until its answer is journalled:
	// after a kill, a resume knows which sources may be at the destination
	// already, publishes them again and says they may be delivered twice.
	OutcomePublished Outcome = "published"
)

// Phase is where a running replay is.
type Phase string

const (
	PhaseHolding      Phase = "holding"       // taking the selected messages
	PhaseBaseline     Phase = "baseline"      // counting the destination's own dead letters
	PhaseCanary       Phase = "canary"        // publishing the canary slowly
	PhaseObserving    Phase = "observing"     // watching the canary's fate
	PhaseAwaitingRamp Phase = "awaiting-ramp" // canary passed: ramp up or abort
	PhaseRunning      Phase = "running"       // publishing the rest, paced
	PhasePaused       Phase = "paused"
	PhaseStopped      Phase = "stopped" // a threshold tripped; see StoppedBecause
	PhaseAborted      Phase = "aborted"
	PhaseDone         Phase = "done"
)

// Command is what the operator (keys) or a headless policy sends.
type Command int

const (
	Pause  Command = iota + 1 // stop publishing, keep holding
	Resume                    // publish again at the rate before the pause
	RampUp                    // double the rate, up to the ceiling (first ramp ends the wait after the canary)
	Abort                     // publish nothing more; unpublished messages stay parked
)

// Progress is what the gauge shows; Run emits it at least every
// 250 ms and on every phase change.
type Progress struct {
	ReplayID     string
	Phase        Phase
	TargetRate   float64 // msg/s the bucket allows now
	AchievedRate float64 // msg/s published over the last few seconds
	Total        int
	Published    int
	Confirmed    int
	Returned     int
	FailedAgain  int
	Remaining    int // not yet published
	InFlight     int // published, confirm pending
	// DestinationDepth is the ready messages of DestinationQueues; -1 unknown.
	DestinationDepth int
	ETA              time.Duration // remaining at the achieved (else target) rate
	ObserveLeft      time.Duration // in PhaseObserving
	// History is messages published in each of the last 60 seconds, oldest
	// first: the sparkline.
	History        []float64
	Blocked        string // the broker blocked publishing, with its reason
	DepthError     string // why DestinationDepth is unknown, when it is
	Collateral     int    // other messages dead-lettered from a destination meanwhile
	StoppedBecause string
	Elapsed        time.Duration
	// SettlingAcks, after the end, is how many source acks the replay
	// waits for the queue to apply before it reports (broker.Replay.Finish).
	SettlingAcks int
}

// Result is how a replay ended. Every item has one outcome.
type Result struct {
	ID string
	// outcomes is every item's outcome (Outcome, Outcomes): a code an item,
	// not a map of a million ids (84 MB at the end of a replay of a
	// whole queue, when the journal writes its last entries).
	outcomes    outcomeTable
	Why         map[string]string // per returned id: return text, nack or timeout
	Resolved    int
	FailedAgain int
	Returned    int
	Untouched   int
	// Confirmed counts messages whose copy the destination confirmed but
	// whose source could not be acked (Unacked lists them): they are still
	// in the parking queue, and a resume acks them without publishing again.
	Confirmed int
	Unacked   []string
	// Gone lists messages a resumed replay found confirmed before the
	// interruption but no longer in the queue: acked then, or taken since.
	Gone []string
	// AckedAgain lists messages a run before the interruption had resolved
	// that the resume found back in the queue (the broker lost their acks
	// with a node): acked again, not published again.
	AckedAgain []string
	// Changed lists messages left untouched because the body held under
	// their id is not the one a decision was made on (a revision's
	// original, an approved proposal's); Why says which.
	Changed []string
	// Unconfirmed lists messages published whose confirm never came (they
	// count as returned, the source is kept): the destination may have the
	// copy, so a later replay may deliver them twice.
	Unconfirmed []string
	// Republished lists messages a run before the interruption had sent
	// without an answer journalled, published again by this resume: the
	// destination may have them twice.
	Republished []string
	// Collateral lists messages that were not replayed but were dead
	// lettered from a destination into a watched parking queue meanwhile.
	Collateral []string
	// DeadLettersAtBaseline counts messages dead-lettered from a
	// destination while the replay ran that stayed within the rate counted
	// before the canary (BaselineRate, per second): the destination's own
	// failures, not collateral.
	DeadLettersAtBaseline int
	BaselineRate          float64
	// Resumable is set when the replay stopped without a finish entry, so
	// that `--resume` can settle what it left (Unacked).
	Resumable bool
	// Warnings are what went wrong without stopping the replay (a requeue
	// that failed after the connection was lost), for the operator.
	Warnings       []string
	Published      int
	StoppedBecause string // a threshold tripped; empty when done or aborted
	Aborted        bool
	// PacedPublished and PacedElapsed measure the phase after the canary, so
	// the achieved rate can be checked against the ceiling.
	PacedPublished int
	PacedElapsed   time.Duration
}

// PacedRate is the achieved rate of the paced phase, msg/s.
func (r Result) PacedRate() float64 {
	if r.PacedElapsed <= 0 {
		return 0
	}
	return float64(r.PacedPublished) / r.PacedElapsed.Seconds()
}

// HeldMessage is one source message the port holds unacked for a replay,
// or, with Copy, a copy of this replay found back in the queue (it failed
// again before an interruption): reported, never held. The message itself
// stays with the port (Port.Load reads it when it is published): a hold of
// a whole group must not keep every body in memory.
type HeldMessage struct {
	ID         string
	BodySHA256 string // of the held body, to check it is the one decided on
	Copy       bool
}

// HeldBatch is what a streamed hold read since its last batch (in queue
// order); Err, on the last one, says why the read ended short.
type HeldBatch struct {
	Held []HeldMessage
	Err  error
}

// HoldStreamer is a Port whose hold goes on reading while the replay
// publishes: a new replay's canary goes out as soon as its first messages
// are held, not once a whole group of 100,000 is.
type HoldStreamer interface {
	// HoldStream begins a hold as Hold does and returns once it reads;
	// the held messages come on the channel, which closes once the read
	// has ended. A message is held before it is sent.
	HoldStream(ctx context.Context, queue string, ids []string, replayID string) (<-chan HeldBatch, error)
	// StopHold ends a streamed hold's read early and waits until it has
	// ended; what it held stays held until settled or closed.
	StopHold()
}

// Blind is a Port that can tell it sees no copy fail again: its queue is
// reached only through the default exchange, so no watch queue could be
// bound like it. The watch after the last publish is then left out (unless
// MaxBacklog asks for the destination's depth): it would wait for nothing.
type Blind interface {
	Blind() bool
}

// Publishing is one message to publish: the original message with
// dlqt's replay headers (CopyHeaders), and the item it belongs to.
type Publishing struct {
	ItemID  string
	Route   triage.Route
	Message triage.Message
}

// PublishResult is the broker's answer to one publish.
type PublishResult struct {
	Confirmed bool   // acked by the broker and not returned
	Why       string // otherwise: the return text, "nack" or a timeout
	// Unknown is set by the run when no answer came in time: the broker
	// may or may not have the copy.
	Unknown bool
}

// PendingConfirm is a publish waiting for its confirm.
type PendingConfirm interface {
	// Wait blocks until the broker confirmed or nacked, or ctx ends (which
	// counts as unconfirmed).
	Wait(ctx context.Context) PublishResult
}

// SignalKind names what the port reports on its own.
type SignalKind int

const (
	SignalFailedAgain SignalKind = iota + 1 // a replayed message came back to a parking queue
	SignalBlocked                           // the broker blocked the publishing connection
	SignalUnblocked
	SignalLost // a connection or channel closed under the replay
	// SignalDeadLetter is any other message dead-lettered into a watched
	// parking queue: ID is its message id, Queue the queue it died in (its
	// newest x-death). The run counts it as collateral when Queue is one of
	// the plan's destination queues.
	SignalDeadLetter
)

// Signal is one report from the port. ID is the item id for
// SignalFailedAgain; Reason the broker's text.
type Signal struct {
	Kind   SignalKind
	ID     string
	Reason string
	Queue  string // SignalDeadLetter: where the message died
}

// Port is the broker side of a replay (internal/broker implements it).
type Port interface {
	// Hold takes the messages with these ids out of circulation without
	// removing them: each stays unacked until Ack or Requeue (or the port
	// closes, which requeues). Every other message is put back. Copies that
	// carry this replayID (failed again) are never held, only reported with
	// Copy set and their item id.
	Hold(ctx context.Context, queue string, ids []string, replayID string) ([]HeldMessage, error)
	// Load is a held message (not a copy) as it was delivered, to publish.
	Load(ctx context.Context, id string) (triage.Message, error)
	// Publish sends one message with mandatory on a confirm channel of its
	// own connection; it returns once sent.
	Publish(ctx context.Context, p Publishing) (PendingConfirm, error)
	// Ack removes held sources (after their copy was confirmed); Requeue
	// puts held sources back.
	Ack(ctx context.Context, ids []string) error
	Requeue(ctx context.Context, ids []string) error
	// Signals reports failed-again copies, blocked connections and losses.
	Signals() <-chan Signal
	// DestinationDepth is the ready messages of these queues together.
	DestinationDepth(ctx context.Context, queues []string) (int, error)
	// Close requeues whatever is still held and releases the connections.
	Close() error
}
