package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Plan is what a proposal will do besides choosing the messages: the
// options of its replay, the reason of its discard. It is part of the
// signed hash, so a run cannot use other options than the approved ones.
type Plan struct {
	Reason    string  `json:"reason,omitempty"`
	Selection string  `json:"selection,omitempty"` // how the ids were chosen, for people
	To        string  `json:"to,omitempty"`        // replay destination EXCHANGE:ROUTING_KEY
	Rate      float64 `json:"rate,omitempty"`
	Canary    int     `json:"canary,omitempty"`
	// CanaryRate is the canary's msg/s; proposals made before it existed
	// lack it (omitempty keeps their hash) and ran at the default.
	CanaryRate float64 `json:"canary_rate,omitempty"`
	Observe    string  `json:"observe,omitempty"`  // a duration, as text
	Baseline   string  `json:"baseline,omitempty"` // a duration, as text
	MaxBacklog int     `json:"max_backlog,omitempty"`
	OrderBy    string  `json:"order_by,omitempty"`
	InOrder    bool    `json:"in_order,omitempty"`
	Revision   string  `json:"revision,omitempty"` // an edit's revision id
}

// Proposal is an action that waits for a second person: the exact
// messages (by id and body), the plan, who asked and until when it may run.
type Proposal struct {
	ID         string   `json:"id"`
	Action     string   `json:"action"` // a gate: replay, discard, edit
	Vhost      string   `json:"vhost"`
	Queue      string   `json:"queue"`
	MessageIDs []string `json:"message_ids"`
	// MessageSHA256 is the SHA-256 of each message's body as the proposer
	// saw it, in the order of MessageIDs: an id alone may name another
	// message by the time the proposal runs. Proposals journaled before it
	// existed lack it (omitempty keeps their hash).
	MessageSHA256 []string  `json:"message_sha256,omitempty"`
	Plan          Plan      `json:"plan"`
	Teams         []string  `json:"teams"` // owners of the messages; their approvers decide
	Proposer      string    `json:"proposer"`
	ProposedAt    time.Time `json:"proposed_at"`
	ExpiresAt     time.Time `json:"expires_at"`
}

// Named is a message as a proposal names it: its id and the SHA-256 of
// its body (triage.BodySHA256).
type Named struct {
	ID, BodySHA256 string
}

// New makes a proposal; its id is derived from its content and time.
func New(action, vhost, queue string, msgs []Named, plan Plan, teams []string, proposer string, now time.Time, ttl time.Duration) Proposal {
	if ttl <= 0 {
		ttl = DefaultExpiry
	}
	now = now.UTC().Truncate(time.Second)
	if teams == nil {
		teams = []string{}
	}
	p := Proposal{
		Action: action, Vhost: vhost, Queue: queue, MessageIDs: make([]string, len(msgs)), MessageSHA256: make([]string, len(msgs)),
		Plan: plan, Teams: teams, Proposer: proposer, ProposedAt: now, ExpiresAt: now.Add(ttl),
	}
	for i, m := range msgs {
		p.MessageIDs[i], p.MessageSHA256[i] = m.ID, m.BodySHA256
	}
	h := p.Hash()
	p.ID = "p-" + h[:10]
	return p
}

// Hash is the SHA-256 (hex) of the proposal's canonical JSON: the
// fields in a fixed order, times in UTC. An approval signs it.
func (p Proposal) Hash() string {
	p.ProposedAt, p.ExpiresAt = p.ProposedAt.UTC(), p.ExpiresAt.UTC()
	raw, err := json.Marshal(p)
	if err != nil { // a struct of strings, numbers and times always marshals
		panic(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// Bodies maps each message id to the SHA-256 of the body the proposal
// names it by; nil for a proposal journaled before proposals named bodies.
func (p Proposal) Bodies() map[string]string {
	if len(p.MessageSHA256) != len(p.MessageIDs) {
		return nil
	}
	out := make(map[string]string, len(p.MessageIDs))
	for i, id := range p.MessageIDs {
		out[id] = p.MessageSHA256[i]
	}
	return out
}

// Expired reports whether the proposal may no longer run at now.
func (p Proposal) Expired(now time.Time) bool { return !now.Before(p.ExpiresAt) }
