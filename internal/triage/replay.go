package triage

import (
	"context"
	"time"
)

// A replay sends selected parking-queue messages back to a route, guided:
// plan (dry run, no I/O) -> canary of a few messages at a low rate ->
// observation window -> ramp up (the operator, or headless straight to the
// ceiling) -> done, with pause, resume and abort at any time. A source
// message is acked only after its copy was confirmed at the destination and
// not returned, and the replay's state is journalled so that a crash can be
// resumed: nothing is lost, a duplicate is possible (at-least-once).

// Defaults of ReplayOptions.
const (
	DefaultReplayRate     = 10.0 // msg/s ceiling
	DefaultCanary         = 5
	DefaultCanaryRate     = 1.0 // msg/s, capped by the ceiling
	DefaultObserve        = 30 * time.Second
	DefaultConfirmTimeout = 30 * time.Second
)

// ReplayOptions steer one replay. Zero values take the defaults above.
type ReplayOptions struct {
	To         *Route        `json:"to,omitempty"`    // nil: each message's original route
	Rate       float64       `json:"rate"`            // ceiling, msg/s
	Canary     int           `json:"canary"`          // messages in the canary
	CanaryRate float64       `json:"canary_rate"`     // msg/s during the canary
	Observe    time.Duration `json:"observe"`         // observation window after the canary
	MaxBacklog int           `json:"max_backlog"`     // stop when the destination depth grows by more; 0 = no limit
	Allow      []string      `json:"allow,omitempty"` // replay.allow globs over EXCHANGE:ROUTING_KEY
	// AutoRamp is the headless policy: after a clean observation go on at
	// Rate. Without it the replay waits for ReplayRampUp in PhaseAwaitingRamp.
	AutoRamp       bool          `json:"auto_ramp,omitempty"`
	ConfirmTimeout time.Duration `json:"confirm_timeout"` // a publish unconfirmed this long counts as returned
}

// ReplayItem is one message of a plan and where it goes.
type ReplayItem struct {
	ID       string `json:"id"`
	Route    Route  `json:"route"`
	Original bool   `json:"original"` // Route is the message's own original route
}

// ReplayDestination is one distinct route of a plan, for the dry run.
type ReplayDestination struct {
	Route    Route    `json:"route"`
	Count    int      `json:"count"`
	Original bool     `json:"original"` // every message sent there came from there
	Allowed  bool     `json:"allowed"`  // original, or matched by replay.allow
	Queues   []string `json:"queues"`   // what the route reaches in the topology
}

// ReplayPlan is a dry run: what would be replayed, where to, and whether it
// may run. Problems empty means it may.
type ReplayPlan struct {
	ID           string              `json:"id"`
	Vhost        string              `json:"vhost"`
	Queue        string              `json:"queue"`
	Selection    Selection           `json:"selection"`
	Items        []ReplayItem        `json:"items"`
	Destinations []ReplayDestination `json:"destinations"`
	// DestinationQueues are all queues the plan's routes reach: their depth
	// is the destination backlog.
	DestinationQueues []string      `json:"destination_queues"`
	Allowed           bool          `json:"allowed"`    // every destination allowed
	Disallowed        []Route       `json:"disallowed"` // destinations replay.allow does not match
	Unroutable        []string      `json:"unroutable"` // ids with no known original route (need To)
	Missing           []string      `json:"missing"`    // selected ids not in the inspection
	Problems          []string      `json:"problems"`   // why it may not run
	Options           ReplayOptions `json:"options"`
	Sample            []Triaged     `json:"-"` // a few selected messages, redacted, for the dry run
	// Prior is set when resuming an interrupted replay from the journal.
	Prior *ReplayPrior `json:"-"`
}

// ReplayPrior is what an interrupted replay already did, from the journal.
type ReplayPrior struct {
	Confirmed    []string                 // confirmed at the destination: ack, never publish again
	Settled      map[string]ReplayOutcome // final outcomes: leave alone
	CanaryPassed bool                     // the observation window passed cleanly
}

// ReplayOutcome is how a message's replay ended.
type ReplayOutcome string

const (
	OutcomeResolved    ReplayOutcome = "resolved"     // confirmed at the destination, source acked
	OutcomeFailedAgain ReplayOutcome = "failed-again" // came back into a parking queue
	OutcomeReturned    ReplayOutcome = "returned"     // returned, nacked or unconfirmed: source kept
	OutcomeUntouched   ReplayOutcome = "untouched"    // never published: source kept
	// OutcomeConfirmed is journalled before a source is acked; it becomes
	// resolved once acked (or, on resume, is acked without a new publish).
	OutcomeConfirmed ReplayOutcome = "confirmed"
)

// ReplayPhase is where a running replay is.
type ReplayPhase string

const (
	PhaseHolding      ReplayPhase = "holding"       // taking the selected messages
	PhaseCanary       ReplayPhase = "canary"        // publishing the canary slowly
	PhaseObserving    ReplayPhase = "observing"     // watching the canary's fate
	PhaseAwaitingRamp ReplayPhase = "awaiting-ramp" // canary passed: ramp up or abort
	PhaseRunning      ReplayPhase = "running"       // publishing the rest, paced
	PhasePaused       ReplayPhase = "paused"
	PhaseStopped      ReplayPhase = "stopped" // a threshold tripped; see StoppedBecause
	PhaseAborted      ReplayPhase = "aborted"
	PhaseDone         ReplayPhase = "done"
)

// ReplayCommand is what the operator (keys) or a headless policy sends.
type ReplayCommand int

const (
	ReplayPause  ReplayCommand = iota + 1 // stop publishing, keep holding
	ReplayResume                          // publish again at the rate before the pause
	ReplayRampUp                          // double the rate, up to the ceiling (first ramp ends the wait after the canary)
	ReplayAbort                           // publish nothing more; unpublished messages stay parked
)

// ReplayProgress is what the gauge shows; RunReplay emits it at least every
// 250 ms and on every phase change.
type ReplayProgress struct {
	ReplayID     string
	Phase        ReplayPhase
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
	StoppedBecause string
	Elapsed        time.Duration
}

// ReplayResult is how a replay ended. Every item has one outcome.
type ReplayResult struct {
	ID             string
	Outcomes       map[string]ReplayOutcome
	Why            map[string]string // per returned id: return text, nack or timeout
	Resolved       int
	FailedAgain    int
	Returned       int
	Untouched      int
	Published      int
	StoppedBecause string // a threshold tripped; empty when done or aborted
	Aborted        bool
	// PacedPublished and PacedElapsed measure the phase after the canary, so
	// the achieved rate can be checked against the ceiling.
	PacedPublished int
	PacedElapsed   time.Duration
}

// PacedRate is the achieved rate of the paced phase, msg/s.
func (r ReplayResult) PacedRate() float64 {
	if r.PacedElapsed <= 0 {
		return 0
	}
	return float64(r.PacedPublished) / r.PacedElapsed.Seconds()
}

// HeldMessage is one source message the port holds unacked for a replay,
// or, with Copy, a copy of this replay found back in the queue (it failed
// again before an interruption): reported, never held.
type HeldMessage struct {
	ID      string
	Message Message
	Copy    bool
}

// ReplayPublishing is one message to publish: the original message with
// dlqt's replay headers (ReplayHeaders), and the item it belongs to.
type ReplayPublishing struct {
	ItemID  string
	Route   Route
	Message Message
}

// PublishResult is the broker's answer to one publish.
type PublishResult struct {
	Confirmed bool   // acked by the broker and not returned
	Why       string // otherwise: the return text, "nack" or a timeout
}

// PendingConfirm is a publish waiting for its confirm.
type PendingConfirm interface {
	// Wait blocks until the broker confirmed or nacked, or ctx ends (which
	// counts as unconfirmed).
	Wait(ctx context.Context) PublishResult
}

// ReplaySignalKind names what the port reports on its own.
type ReplaySignalKind int

const (
	SignalFailedAgain ReplaySignalKind = iota + 1 // a replayed message came back to a parking queue
	SignalBlocked                                 // the broker blocked the publishing connection
	SignalUnblocked
	SignalLost // a connection or channel closed under the replay
)

// ReplaySignal is one report from the port. ID is the item id for
// SignalFailedAgain; Reason the broker's text.
type ReplaySignal struct {
	Kind   ReplaySignalKind
	ID     string
	Reason string
}

// ReplayPort is the broker side of a replay (internal/broker implements it).
type ReplayPort interface {
	// Hold takes the messages with these ids out of circulation without
	// removing them: each stays unacked until Ack or Requeue (or the port
	// closes, which requeues). Every other message is put back. Copies that
	// carry this replayID (failed again) are never held, only reported with
	// Copy set and their item id.
	Hold(ctx context.Context, queue string, ids []string, replayID string) ([]HeldMessage, error)
	// Publish sends one message with mandatory on a confirm channel of its
	// own connection; it returns once sent.
	Publish(ctx context.Context, p ReplayPublishing) (PendingConfirm, error)
	// Ack removes held sources (after their copy was confirmed); Requeue
	// puts held sources back.
	Ack(ctx context.Context, ids []string) error
	Requeue(ctx context.Context, ids []string) error
	// Signals reports failed-again copies, blocked connections and losses.
	Signals() <-chan ReplaySignal
	// DestinationDepth is the ready messages of these queues together.
	DestinationDepth(ctx context.Context, queues []string) (int, error)
	// Close requeues whatever is still held and releases the connections.
	Close() error
}
