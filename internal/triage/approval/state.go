package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// Status is where a proposal stands.
type Status string

// A proposal is pending until approved or rejected; an approved one runs
// once; either expires when its time is up before it ran.
const (
	StatusPending  Status = "pending"
	StatusApproved Status = "approved"
	StatusRejected Status = "rejected"
	StatusExpired  Status = "expired"
	StatusRun      Status = "run"
)

// Decision is an approval or a rejection as journaled: who, when, why,
// and the proposal hash they signed with which key.
type Decision struct {
	Approve   bool      `json:"approve"`
	By        string    `json:"by"`
	At        time.Time `json:"at"`
	Reason    string    `json:"reason,omitempty"`
	Hash      string    `json:"hash"`
	Signature string    `json:"signature,omitempty"` // armored SSH signature over Hash
	Key       string    `json:"key,omitempty"`       // SHA256 fingerprint of the signing key
	Session   bool      `json:"session,omitempty"`   // identified by a dlqt serve session's key
}

// State is one proposal folded from the journal.
type State struct {
	Proposal  Proposal
	Hash      string // as journaled with the proposal
	Decisions []Decision
	RunBy     string
	RunAt     time.Time
	Result    string // what the run reported, once it ended
}

// Approval is the decision that approved the proposal, if any.
func (s State) Approval() (Decision, bool) {
	for _, d := range s.Decisions {
		if d.Approve {
			return d, true
		}
	}
	return Decision{}, false
}

// Rejected reports whether someone rejected the proposal.
func (s State) Rejected() bool {
	return slices.ContainsFunc(s.Decisions, func(d Decision) bool { return !d.Approve })
}

// Status is where the proposal stands at now.
func (s State) Status(now time.Time) Status {
	switch {
	case !s.RunAt.IsZero():
		return StatusRun
	case s.Rejected():
		return StatusRejected
	case s.Proposal.Expired(now):
		return StatusExpired
	}
	if _, ok := s.Approval(); ok {
		return StatusApproved
	}
	return StatusPending
}

// Journal is where proposals are read back from (internal/journal
// implements it).
type Journal interface {
	Records() ([]triage.Recorded, error)
	Path() string
}

// ErrUnknown wraps triage.ErrNotFound for a proposal id the journal lacks.
var ErrUnknown = fmt.Errorf("proposal %w", triage.ErrNotFound)

// Find reads one proposal's state.
func Find(j Journal, id string) (State, error) {
	states, err := States(j)
	if err != nil {
		return State{}, err
	}
	for _, s := range states {
		if s.Proposal.ID == id {
			return s, nil
		}
	}
	return State{}, fmt.Errorf("%q: %w in journal %s", id, ErrUnknown, j.Path())
}

// States folds the journal's proposal records, oldest proposal first.
func States(j Journal) ([]State, error) {
	rs, err := RecordsOf(j, triage.Action.IsProposal)
	if err != nil {
		return nil, err
	}
	return Fold(rs)
}

// Filtering is a Journal that can pass over, undecoded, the records a
// reader has no use for (journal.Journal.RecordsOf): a replay's plan of
// 100,000 messages is megabytes of JSON.
type Filtering interface {
	RecordsOf(keep func(triage.Action) bool) ([]triage.Recorded, error)
}

// RecordsOf is j's records whose action keep takes, read through
// Filtering when j has it.
func RecordsOf(j Journal, keep func(triage.Action) bool) ([]triage.Recorded, error) {
	if f, ok := j.(Filtering); ok {
		return f.RecordsOf(keep)
	}
	rs, err := j.Records()
	if err != nil {
		return nil, err
	}
	kept := rs[:0]
	for _, r := range rs {
		if keep(r.Action) {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// Fold is States over records already read.
func Fold(rs []triage.Recorded) ([]State, error) {
	byID := map[string]*State{}
	var order []string
	for _, r := range rs {
		if !r.Action.IsProposal() {
			continue
		}
		id, _ := r.Details["proposal_id"].(string)
		if r.Action == triage.ActionProposal {
			s, err := proposed(r)
			if err != nil {
				return nil, fmt.Errorf("entry %d: %w", r.Seq, err)
			}
			byID[s.Proposal.ID] = &s
			order = append(order, s.Proposal.ID)
			continue
		}
		s := byID[id]
		if s == nil {
			return nil, fmt.Errorf("entry %d: %s of unknown proposal %q", r.Seq, r.Action, id)
		}
		if err := s.apply(r); err != nil {
			return nil, fmt.Errorf("entry %d: %w", r.Seq, err)
		}
	}
	out := make([]State, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out, nil
}

func proposed(r triage.Recorded) (State, error) {
	var s State
	if err := redecode(r.Details["proposal"], &s.Proposal); err != nil {
		return s, fmt.Errorf("proposal: %w", err)
	}
	s.Hash, _ = r.Details["hash"].(string)
	if s.Proposal.ID == "" || s.Hash != s.Proposal.Hash() {
		return s, errors.New("proposal does not match its journaled hash")
	}
	return s, nil
}

func (s *State) apply(r triage.Recorded) error {
	switch r.Action {
	case triage.ActionProposalApprove, triage.ActionProposalReject:
		var d Decision
		if err := redecode(r.Details["decision"], &d); err != nil {
			return fmt.Errorf("decision: %w", err)
		}
		s.Decisions = append(s.Decisions, d)
	case triage.ActionProposalRun:
		if s.RunAt.IsZero() {
			s.RunBy, s.RunAt = r.Actor, r.Time
		}
		if res, _ := r.Details["result"].(string); res != "" {
			s.Result = res
		}
	}
	return nil
}

// redecode turns a journaled value (a map after the JSON round trip)
// back into v.
func redecode(from, v any) error {
	raw, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}
