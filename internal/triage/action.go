package triage

// Action names one kind of journal entry. The names are the journal's
// vocabulary, written by the use cases (discard, replay, tagging, reveal,
// export) and read back by the journal and the replay's resume; they are
// stored as text, so a name never changes once released.
type Action string

// Actions of the read path.
const (
	ActionTag   Action = "tag"
	ActionUntag Action = "untag"
	// ActionReveal is written before a message is shown unredacted: no
	// entry, no reveal.
	ActionReveal Action = "reveal"
	// ActionExport is what an export of the journal leaves behind.
	ActionExport Action = "export"
	// ActionSnapshotRaw is written when a snapshot file is written with
	// unredacted bodies: who, which queues, the file and its SHA-256.
	ActionSnapshotRaw Action = "snapshot-raw"
)

// Actions of `dlqt serve`: an SSH session opened and closed, so an export
// shows who was connected during an incident.
const (
	ActionSessionStart Action = "session_start"
	ActionSessionEnd   Action = "session_end"
)

// ActionDiscard names discard records: one for the decision, written
// before the broker is touched, one for the outcome.
const ActionDiscard Action = "discard"

// ActionQuarantine names a message the AMQP client cannot decode, saved to
// a file and then removed from its queue: one record for the save, one for
// the removal.
const ActionQuarantine Action = "quarantine"

// ActionFullScan names full scan records (every message moved to the tail
// of its queue to read it whole): the decision, written before the first
// message moves, and the outcome.
const ActionFullScan Action = "full-scan"

// Actions of a replay. Outcome entries carry the outcome in Reason and the
// message ids; "confirmed" is written before the sources are acked.
const (
	ActionReplayPlan    Action = "replay-plan"
	ActionReplayStart   Action = "replay-start"
	ActionReplayPause   Action = "replay-pause"
	ActionReplayResume  Action = "replay-resume"
	ActionReplayRamp    Action = "replay-ramp"
	ActionReplayStop    Action = "replay-stop" // a threshold tripped
	ActionReplayAbort   Action = "replay-abort"
	ActionReplayFinish  Action = "replay-finish"
	ActionReplayOutcome Action = "replay-outcome"
)

// IsReplay reports whether a belongs to a replay's lifecycle or outcomes.
func (a Action) IsReplay() bool {
	switch a {
	case ActionReplayPlan, ActionReplayStart, ActionReplayPause, ActionReplayResume, ActionReplayRamp,
		ActionReplayStop, ActionReplayAbort, ActionReplayFinish, ActionReplayOutcome:
		return true
	}
	return false
}

// Actions of the approval workflow (triage/approval): a proposal, the
// decisions on it (each naming the proposal's hash its signer signed) and
// its run. The proposal id is in Details["proposal_id"].
const (
	ActionProposal        Action = "proposal"
	ActionProposalApprove Action = "proposal-approve"
	ActionProposalReject  Action = "proposal-reject"
	ActionProposalRun     Action = "proposal-run"
)

// IsProposal reports whether a belongs to the approval workflow.
func (a Action) IsProposal() bool {
	switch a {
	case ActionProposal, ActionProposalApprove, ActionProposalReject, ActionProposalRun:
		return true
	}
	return false
}

// ActionEdit names a revision of a message's body: the original stays in
// its queue untouched, the journal keeps the new body, the fields changed,
// both SHA-256s and the original body (triage/approval).
const ActionEdit Action = "edit"
